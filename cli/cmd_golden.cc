// `tuna golden update --golden_v N [--session_id S] [--base_golden_v B] [--overwrite]` and
// `tuna golden list [--golden_v N]` (MITuna's update_golden): golden db versions in the store
// (schema/store/golden_store.h). `tuna export --golden_v N` writes their files.
// Exit codes: 0 done; 1 error; 2 bad arguments; 3 the version exists and --overwrite is missing.
#include <iostream>
#include <memory>
#include <optional>

#include "cli/command.h"
#include "cli/db_access.h"
#include "cli/json_text.h"
#include "schema/store/golden_store.h"

namespace tuna::cli {
namespace {

struct UpdateFlags {
  int64_t golden_v = -1;
  int64_t session_id = 0;
  int64_t base_golden_v = -1;
  bool overwrite = false;
  bool json = false;
};

int Fail(const char* what, const absl::Status& st) {
  std::cerr << "tuna golden " << what << ": " << st.message() << "\n";
  if (absl::IsInvalidArgument(st)) return 2;
  return absl::IsAlreadyExists(st) ? 3 : 1;
}

int Update(const GlobalOptions& global, const UpdateFlags& f) {
  schema::GoldenUpdate u;
  u.golden_v = f.golden_v;
  if (f.session_id > 0) u.session_id = f.session_id;
  if (f.base_golden_v >= 0) u.base_golden_v = f.base_golden_v;
  u.overwrite = f.overwrite;
  auto db = OpenCommandDatabase(global);
  if (!db.ok()) return Fail("update", db.status());
  auto report = schema::UpdateGolden(**db, u);
  if (!report.ok()) return Fail("update", report.status());
  if (f.json) {
    std::cout << JsonText({{"golden_v", f.golden_v},
                           {"rows_before", report->rows_before},
                           {"from_base", report->from_base},
                           {"from_session_find", report->from_session_find},
                           {"from_session_perf", report->from_session_perf},
                           {"rows", report->rows_after}})
              << "\n";
    return 0;
  }
  std::cout << "golden version " << f.golden_v << ": " << report->rows_after << " rows (was "
            << report->rows_before << ")";
  if (u.base_golden_v)
    std::cout << "; " << report->from_base << " from version " << *u.base_golden_v;
  if (u.session_id) {
    std::cout << "; " << report->from_session_find << " find and " << report->from_session_perf
              << " perf results from session " << *u.session_id;
  }
  std::cout << "\n";
  return 0;
}

int List(const GlobalOptions& global, int64_t golden_v, bool json) {
  auto db = OpenCommandDatabase(global);
  if (!db.ok()) return Fail("list", db.status());
  auto rows =
      schema::ListGolden(**db, golden_v >= 0 ? std::optional<int64_t>(golden_v) : std::nullopt);
  if (!rows.ok()) return Fail("list", rows.status());
  PrintRows(
      *rows, json,
      [](const schema::GoldenTargetRows& r) -> Json {
        return {{"golden_v", r.golden_v},    {"arch", r.target.arch},
                {"num_cu", r.target.num_cu}, {"backend", r.target.backend},
                {"find_rows", r.find_rows},  {"perf_rows", r.perf_rows}};
      },
      {"golden_v", "arch", "num_cu", "backend", "find", "perf"}, {9, 24, 7, 8, 8},
      [](const schema::GoldenTargetRows& r) {
        return std::vector<std::string>{
            std::to_string(r.golden_v),      r.target.arch,
            std::to_string(r.target.num_cu), r.target.backend,
            std::to_string(r.find_rows),     std::to_string(r.perf_rows)};
      });
  return 0;
}

}  // namespace

void AddGoldenCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("golden", "golden db versions: the results that ship");
  cmd->require_subcommand(1);
  const GlobalOptions* global = ctx.global;
  CommandFn* selected = ctx.selected;

  auto f = std::make_shared<UpdateFlags>();
  CLI::App* update = cmd->add_subcommand(
      "update", "fill golden version N from a session's results and/or a base version");
  update->add_option("--golden_v,--golden-v", f->golden_v, "golden version to write")
      ->required()
      ->check(CLI::NonNegativeNumber);
  AddSessionIdOption(update, &f->session_id, "tuning session whose exportable results are copied",
                     /*required=*/false);
  update
      ->add_option("--base_golden_v,--base-golden-v", f->base_golden_v,
                   "golden version copied first (the session's results then replace its rows)")
      ->check(CLI::NonNegativeNumber);
  update->add_flag("-o,--overwrite", f->overwrite, "write into a version that has rows");
  update->add_flag("--json", f->json, "print the counts as one JSON object");
  update->footer("Exit code 3: the version has rows and --overwrite was not given.");
  update->callback([=] { *selected = [=] { return Update(*global, *f); }; });

  auto v = std::make_shared<int64_t>(-1);
  auto json = std::make_shared<bool>(false);
  CLI::App* list = cmd->add_subcommand("list", "golden versions and their targets");
  list->add_option("--golden_v,--golden-v", *v, "only this version")->check(CLI::NonNegativeNumber);
  list->add_flag("--json", *json, "print one JSON array");
  list->callback([=] { *selected = [=] { return List(*global, *v, *json); }; });
}

}  // namespace tuna::cli
