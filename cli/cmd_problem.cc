// `tuna problem parse [--target ARCH [--why]] (LINE... | -f FILE | --fdb-key KEY) [--json]`: shows
// how tuna reads a MIOpenDriver line, a file of them or a find-db key: the canonical line, the
// find-db key, the perf-db columns and the text perf-db key of every resulting problem (and, for a
// transposed one, the convolution that runs it); with --target, the solvers that would tune it on
// that arch (with --why, each other solver of its direction and why it does not apply).
#include <algorithm>
#include <iostream>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/json_text.h"
#include "cli/terminal_text.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/problem/keys.h"
#include "tuner_core/problem/transpose.h"
#include "tuner_core/runtime/fallback.h"
#include "tuner_core/solver/registry.h"
#include "tuner_core/solver/target.h"

namespace tuna::cli {
namespace {

struct ParseOptions {
  std::string file;
  std::string fdb_key;
  std::string target;  // an arch: list the solvers that apply there
  bool why = false;    // with target: also the solvers that do not, and why
  bool json = false;
  std::vector<std::string> line;  // the MIOpenDriver line, as one or several args
};

// (name, value) pairs of the perf-db `config` columns in table order.
std::vector<std::pair<std::string, std::string>> ConfigColumns(const PerfDbConfig& c) {
  auto s = [](int64_t v) { return std::to_string(v); };
  return {{"layout", c.layout},
          {"data_type", c.data_type},
          {"direction", c.direction},
          {"spatial_dim", s(c.spatial_dim)},
          {"in_channels", s(c.in_channels)},
          {"in_h", s(c.in_h)},
          {"in_w", s(c.in_w)},
          {"in_d", s(c.in_d)},
          {"fil_h", s(c.fil_h)},
          {"fil_w", s(c.fil_w)},
          {"fil_d", s(c.fil_d)},
          {"out_channels", s(c.out_channels)},
          {"batchsize", s(c.batchsize)},
          {"pad_h", s(c.pad_h)},
          {"pad_w", s(c.pad_w)},
          {"pad_d", s(c.pad_d)},
          {"conv_stride_h", s(c.conv_stride_h)},
          {"conv_stride_w", s(c.conv_stride_w)},
          {"conv_stride_d", s(c.conv_stride_d)},
          {"dilation_h", s(c.dilation_h)},
          {"dilation_w", s(c.dilation_w)},
          {"dilation_d", s(c.dilation_d)},
          {"bias", s(c.bias)},
          {"group_count", s(c.group_count)}};
}

// One problem with where it came from (line 0 = not from a file).
struct Item {
  int line = 0;
  std::string source;
  Problem problem;
};

// The solvers of the problem's direction on `target`: the applicable ones in registry order and
// the others with their reasons (transposed problems: those of the convolution that runs them).
struct SolverFit {
  std::vector<const solver::Solver*> applicable;
  std::vector<std::pair<std::string, std::string>> refused;
};

// True when nothing but MIOpen's naive solvers (or nothing at all) would tune the problem: the
// slowest kernels, worth knowing before a campaign.
bool NaiveOnly(const SolverFit& fit) {
  return std::all_of(fit.applicable.begin(), fit.applicable.end(),
                     [](const solver::Solver* s) { return runtime::IsNaiveSolver(*s); });
}

std::vector<std::string> Names(const std::vector<const solver::Solver*>& solvers) {
  std::vector<std::string> names;
  for (const solver::Solver* s : solvers) names.emplace_back(s->Name());
  return names;
}

SolverFit FitOf(const solver::Target& target, const Problem& given) {
  SolverFit fit;
  absl::StatusOr<Problem> conv = AsConvolution(given);
  if (!conv.ok()) return fit;
  for (const solver::RegisteredSolver& r : solver::SolverRegistry::Builtin().All()) {
    const std::vector<Direction> dirs = r.solver->Directions();
    if (std::find(dirs.begin(), dirs.end(), conv->direction) == dirs.end()) continue;
    if (absl::Status st = r.solver->IsApplicable(target, *conv); st.ok()) {
      fit.applicable.push_back(r.solver);
    } else {
      fit.refused.emplace_back(r.solver->Name(), std::string(st.message()));
    }
  }
  return fit;
}

void PrintText(const std::vector<Item>& items, const solver::Target* target, bool why) {
  int naive_only = 0;
  for (const Item& it : items) {
    const Problem& p = it.problem;
    if (it.line > 0) std::cout << "# line " << it.line << "\n";
    std::cout << ToDriverLine(p) << "\n";
    if (p.mode == ConvMode::kTrans) {
      absl::StatusOr<Problem> conv = AsConvolution(p);
      std::cout << "  runs as:      " << (conv.ok() ? ToDriverLine(*conv) : std::string(conv.status().message()))
                << "\n";
    }
    std::cout << "  find-db key:  " << FindDbKey(p) << "\n";
    std::cout << "  perf-db key:  " << PerfDbTextKey(p) << "\n";
    std::cout << "  perf-db row: ";
    for (const auto& [name, value] : ConfigColumns(ToPerfDbConfig(p)))
      std::cout << " " << name << "=" << value;
    std::cout << "\n";
    if (target == nullptr) continue;
    const SolverFit fit = FitOf(*target, p);
    naive_only += NaiveOnly(fit);
    std::cout << "  solvers (" << target->arch << "):";
    for (const std::string& name : Names(fit.applicable)) std::cout << " " << name;
    std::cout << (fit.applicable.empty() ? " none\n" : "\n");
    if (!why) continue;
    for (const auto& [name, reason] : fit.refused) std::cout << "    not applicable: " << reason << "\n";  // names it
  }
  if (target != nullptr && items.size() > 1) {
    std::cout << "# " << target->arch << ": " << naive_only << " of " << items.size()
              << " problem(s) only the naive solver would tune\n";
  }
}

Json ProblemJson(const Item& it, const solver::Target* target) {
  const Problem& p = it.problem;
  Json j = Json::object();
  if (it.line > 0) j["line"] = it.line;
  Json config = Json::object();
  for (const auto& [name, value] : ConfigColumns(ToPerfDbConfig(p))) {
    const bool is_string = name == "layout" || name == "data_type" || name == "direction";
    config[name] = is_string ? Json(value) : Json(std::stoll(value));
  }
  j["source"] = it.source;
  j["direction"] = DirectionName(p.direction);
  j["driver_line"] = ToDriverLine(p);
  if (p.mode == ConvMode::kTrans) {  // the convolution tuna stores, tunes and runs for it
    absl::StatusOr<Problem> conv = AsConvolution(p);
    j["runs_as"] = conv.ok() ? ToDriverLine(*conv) : std::string(conv.status().message());
  }
  j["fdb_key"] = FindDbKey(p);
  j["perf_db_text_key"] = PerfDbTextKey(p);
  j["perf_db_config"] = config;
  j["flops"] = static_cast<int64_t>(p.Flops());
  if (target != nullptr) {
    const SolverFit fit = FitOf(*target, p);
    j["solvers"] = Names(fit.applicable);
    j["naive_only"] = NaiveOnly(fit);
    Json refused = Json::object();
    for (const auto& [name, reason] : fit.refused) refused[name] = reason;
    j["not_applicable"] = refused;
  }
  return j;
}

void PrintJson(const std::vector<Item>& items, const std::vector<DriverFileError>& errors,
               const solver::Target* target) {
  Json problems = Json::array();
  for (const Item& it : items) problems.push_back(ProblemJson(it, target));
  Json errs = Json::array();
  for (const DriverFileError& e : errors) {
    Json j = Json::object();
    if (e.line_number > 0) j["line"] = e.line_number;
    j["source"] = e.text;
    j["error"] = e.reason;
    errs.push_back(j);
  }
  std::cout << JsonText({{"problems", problems}, {"errors", errs}}, /*items_on_lines=*/true)
            << "\n";
}

int RunParse(const ParseOptions& opt) {
  std::string line;
  for (const std::string& a : opt.line) line += (line.empty() ? "" : " ") + a;
  const int given = !opt.file.empty() + !opt.fdb_key.empty() + !line.empty();
  if (given != 1) {
    std::cerr << "tuna problem parse: give exactly one of LINE, -f FILE or --fdb-key KEY\n";
    return 2;
  }
  std::optional<solver::Target> target;
  if (!opt.target.empty()) {
    absl::StatusOr<solver::Target> t = solver::TargetForArch(opt.target);
    if (!t.ok()) {
      std::cerr << "tuna problem parse: --target: " << EscapeControlBytes(t.status().message()) << "\n";
      return 2;
    }
    target = *t;
  } else if (opt.why) {
    std::cerr << "tuna problem parse: --why needs --target ARCH\n";
    return 2;
  }
  std::vector<Item> items;
  std::vector<DriverFileError> errors;
  std::string where;  // prefix of error lines
  if (!opt.file.empty()) {
    auto file = ParseDriverFile(opt.file);
    if (!file.ok()) {
      std::cerr << "tuna problem parse: " << EscapeControlBytes(file.status().message()) << "\n";
      return 1;
    }
    for (const DriverFileLine& l : file->lines)
      for (const Problem& p : l.problems) items.push_back({l.line_number, l.text, p});
    errors = file->errors;
    where = opt.file + ":";
  } else if (!opt.fdb_key.empty()) {
    auto p = ParseFindDbKey(opt.fdb_key);
    if (p.ok()) {
      items.push_back({0, opt.fdb_key, *p});
    } else {
      errors.push_back({0, opt.fdb_key, std::string(p.status().message())});
    }
  } else {
    auto ps = ParseDriverLine(line);
    if (ps.ok()) {
      for (const Problem& p : *ps) items.push_back({0, line, p});
    } else {
      errors.push_back({0, line, std::string(ps.status().message())});
    }
  }

  const solver::Target* arch = target ? &*target : nullptr;
  if (opt.json) {
    PrintJson(items, errors, arch);
  } else {
    PrintText(items, arch, opt.why);
  }
  for (const DriverFileError& e : errors) {
    std::cerr << "tuna problem parse: " << where;
    if (e.line_number > 0) std::cerr << e.line_number << ": ";
    else if (!where.empty()) std::cerr << " ";
    std::cerr << EscapeControlBytes(e.reason) << "\n    " << EscapeControlBytes(e.text) << "\n";
  }
  if (!errors.empty() && !opt.file.empty()) {
    std::cerr << "tuna problem parse: " << errors.size() << " bad line(s) in " << opt.file << "\n";
  }
  return errors.empty() ? 0 : 1;
}

}  // namespace

void AddProblemCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("problem", "parse MIOpenDriver lines and MIOpen db keys");
  cmd->require_subcommand(1);
  auto opt = std::make_shared<ParseOptions>();
  CLI::App* parse = cmd->add_subcommand(
      "parse",
      "show the canonical driver line, find-db key and perf-db columns of each problem of a "
      "MIOpenDriver LINE (e.g. `tuna problem parse conv -n 32 -c 64 ... -F 0`), a file of "
      "lines or a find-db key");
  parse->add_option("-f,--file", opt->file, "a file of MIOpenDriver lines ('#' comments)");
  parse->add_option("--fdb-key", opt->fdb_key, "a find-db key, e.g. 64-56-56-1x1-...-NCHW-FP32-F");
  parse->add_flag("--json", opt->json, "print JSON instead of text");
  parse->add_option("--target", opt->target,
                    "also list the solvers that would tune each problem on this arch (sm_90, gfx90a, cpu-avx2; "
                    "before the LINE)");
  parse->add_flag("--why", opt->why, "with --target: each other solver of the direction and why it does not apply");
  // The driver line keeps its own flags (-f, -n ...): CLI11 stops at its first word.
  parse->prefix_command();
  parse->callback([ctx, opt, parse] {
    opt->line.clear();
    for (std::string& a : parse->remaining()) {
      if (a == "--json") {
        opt->json = true;  // accepted after the line too; MIOpenDriver has no such flag
      } else {
        opt->line.push_back(std::move(a));
      }
    }
    *ctx.selected = [opt] { return RunParse(*opt); };
  });
}

}  // namespace tuna::cli
