#include "tuner_core/search/report.h"

#include <cmath>

#include "fmt/format.h"
#include "tuner_core/json/json_text.h"
#include "tuner_core/problem/driver_line.h"

namespace tuna::search {

double Tflops(const Problem& problem, double ms) {
  return ms > 0 ? problem.Flops() / (ms * 1e-3) / 1e12 : 0;
}

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
    if (!s.stopped_by.empty()) line += fmt::format(" stopped-by {}", s.stopped_by);
    if (s.predicted_seeded > 0) line += fmt::format(" predicted-seeds {}", s.predicted_seeded);
    if (!s.predictor_note.empty()) line += fmt::format(" (predictor not used: {})", s.predictor_note);
    if (s.reused) line += " reused";
    if (const auto& f = s.specialized; f && f->disposition == Disposition::kPassed) {
      line += fmt::format(" sizes-compiled-in {:.4f} ms vs {:.4f} ms ({})", f->fixed_ms, f->runtime_ms,
                          f->kept ? "kept" : "not kept");
    } else if (f) {
      line += fmt::format(" sizes-compiled-in {}", DispositionName(f->disposition));
    }
    if (s.disposition != Disposition::kPassed && !s.error.empty()) line += "\n      " + s.error.substr(0, 300);
    out += line + "\n";
  }
  return out;
}

namespace {

Json SpecializedJson(const std::optional<SolverTuneResult::Specialized>& f) {
  if (!f) return Json();
  return {{"params", f->config.ToString()},
          {"status", std::string(DispositionName(f->disposition))},
          {"runtime_ms", JsonMeasure(f->runtime_ms)},
          {"fixed_ms", JsonMeasure(f->fixed_ms)},
          {"kept", f->kept},
          {"error", f->error}};
}

Json SolverJson(const SolverTuneResult& s) {
  Json dispositions = Json::object();
  for (const auto& [d, n] : s.by_disposition) dispositions[std::string(DispositionName(d))] = n;
  return {{"id", s.id},
          {"name", s.name},
          {"tunable", s.tunable},
          {"status", std::string(DispositionName(s.disposition))},
          {"best_params", s.best_params},
          {"best_ms", JsonMeasure(s.best_ms)},
          {"default_ms", s.default_ms ? JsonMeasure(*s.default_ms) : Json()},
          {"planned", s.planned},
          {"tried", s.tried},
          {"passed", s.passed},
          {"failed", s.failed},
          {"dropped_early", s.dropped_early},
          {"stopped_by", s.stopped_by},
          {"predicted_seeded", s.predicted_seeded},
          {"predictor_note", s.predictor_note},
          {"reused", s.reused},
          {"compiled", s.compiled},
          {"compile_failed", s.compile_failed},
          {"dispositions", dispositions},
          {"specialized", SpecializedJson(s.specialized)},
          {"error", s.error}};
}

Json ResultJson(const TuneResult& r) {
  Json best;  // null: no solver passed
  if (r.best >= 0) {
    const SolverTuneResult& b = r.solvers[r.best];
    best = {{"solver", b.name},
            {"params", b.best_params},
            {"ms", JsonMeasure(b.best_ms)},
            {"tflops", JsonMeasure(Tflops(r.problem, b.best_ms))}};
  }
  return {{"driver", ToDriverLine(r.problem)},
          {"direction", std::string(DirectionName(r.problem.direction))},
          {"arch", r.arch},
          {"dry_run", r.dry_run},
          {"reference", r.reference},
          {"seconds", JsonMeasure(r.seconds)},
          {"error", r.error},
          {"flops", JsonMeasure(r.problem.Flops())},
          {"best", best},
          {"solvers", JsonList(r.solvers, SolverJson)}};
}

}  // namespace

std::string TuneResultsJson(const std::vector<TuneResult>& results) {
  return JsonText({{"results", JsonList(results, ResultJson)}}, /*items_on_lines=*/true) + "\n";
}

}  // namespace tuna::search
