#include "tuner_core/search/report.h"

#include <cmath>

#include "fmt/format.h"
#include "tuner_core/problem/driver_line.h"

namespace tuna::search {

double Tflops(const Problem& problem, double ms) {
  return ms > 0 ? problem.Flops() / (ms * 1e-3) / 1e12 : 0;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : "null"; }

std::string FormatTuneResult(const TuneResult& r) {
  std::string out = fmt::format("{}\n", ToDriverLine(r.problem));
  if (!r.error.empty()) return out + fmt::format("  error: {}\n", r.error);
  if (r.solvers.empty()) return out + "  no applicable solver\n";
  if (r.dry_run) {
    for (const SolverTuneResult& s : r.solvers) {
      out += fmt::format("  {:<32} compiled {:>5}  failed {:>5}  not-applicable {:>5}{}\n", s.name, s.compiled,
                         s.compile_failed,
                         s.by_disposition.count(Disposition::kNotApplicable) ? s.by_disposition.at(Disposition::kNotApplicable) : 0,
                         s.compile_failed > 0 ? "  first error: " + s.error.substr(0, 200) : "");
    }
    return out;
  }
  if (r.best >= 0) {
    const SolverTuneResult& b = r.solvers[r.best];
    out += fmt::format("  best: {} [{}] {:.4f} ms, {:.3f} TFLOPS\n", b.name, b.best_params, b.best_ms,
                       Tflops(r.problem, b.best_ms));
  } else {
    out += "  best: none (no solver passed)\n";
  }
  for (const SolverTuneResult& s : r.solvers) {
    std::string line = fmt::format("  {:<32} {:<13}", s.name, DispositionName(s.disposition));
    if (s.disposition == Disposition::kPassed) {
      line += fmt::format(" {:>10.4f} ms {:>8.3f} TFLOPS", s.best_ms, Tflops(r.problem, s.best_ms));
      if (s.default_ms) line += fmt::format("  default {:.4f} ms", *s.default_ms);
      if (s.tunable) line += fmt::format("  params [{}]", s.best_params);
    }
    line += fmt::format("  tried {} failed {}", s.tried, s.failed);
    if (s.dropped_early > 0) line += fmt::format(" dropped-early {}", s.dropped_early);
    if (s.disposition != Disposition::kPassed && !s.error.empty()) line += "\n      " + s.error.substr(0, 300);
    out += line + "\n";
  }
  return out;
}

std::string TuneResultsJson(const std::vector<TuneResult>& results) {
  std::string out = "{\"results\": [";
  for (size_t i = 0; i < results.size(); ++i) {
    const TuneResult& r = results[i];
    if (i) out += ",";
    out += fmt::format(
        "\n  {{\"driver\": {}, \"direction\": {}, \"arch\": {}, \"dry_run\": {}, \"reference\": {}, "
        "\"seconds\": {}, \"error\": {}, \"flops\": {}, \"best\": ",
        JsonString(ToDriverLine(r.problem)), JsonString(std::string(DirectionName(r.problem.direction))),
        JsonString(r.arch), r.dry_run ? "true" : "false", JsonString(r.reference), JsonNumber(r.seconds),
        JsonString(r.error), JsonNumber(r.problem.Flops()));
    if (r.best >= 0) {
      const SolverTuneResult& b = r.solvers[r.best];
      out += fmt::format("{{\"solver\": {}, \"params\": {}, \"ms\": {}, \"tflops\": {}}}", JsonString(b.name),
                         JsonString(b.best_params), JsonNumber(b.best_ms), JsonNumber(Tflops(r.problem, b.best_ms)));
    } else {
      out += "null";
    }
    out += ", \"solvers\": [";
    for (size_t j = 0; j < r.solvers.size(); ++j) {
      const SolverTuneResult& s = r.solvers[j];
      if (j) out += ",";
      std::string disp;
      for (const auto& [d, n] : s.by_disposition) {
        if (!disp.empty()) disp += ", ";
        disp += fmt::format("{}: {}", JsonString(std::string(DispositionName(d))), n);
      }
      out += fmt::format(
          "\n    {{\"id\": {}, \"name\": {}, \"tunable\": {}, \"status\": {}, \"best_params\": {}, "
          "\"best_ms\": {}, \"default_ms\": {}, \"planned\": {}, \"tried\": {}, \"passed\": {}, "
          "\"failed\": {}, \"dropped_early\": {}, \"compiled\": {}, \"compile_failed\": {}, "
          "\"dispositions\": {{{}}}, \"error\": {}}}",
          s.id, JsonString(s.name), s.tunable ? "true" : "false",
          JsonString(std::string(DispositionName(s.disposition))), JsonString(s.best_params),
          JsonNumber(s.best_ms), s.default_ms ? JsonNumber(*s.default_ms) : "null", s.planned, s.tried,
          s.passed, s.failed, s.dropped_early, s.compiled, s.compile_failed, disp, JsonString(s.error));
    }
    out += "]}";
  }
  return out + "\n]}\n";
}

}  // namespace tuna::search
