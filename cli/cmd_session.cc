// `tuna session init -l LABEL (--arch A --num_cu N [--backend B] | --detect) [--json]` and
// `tuna session list [--json]` (MITuna's --init_session).
#include <iostream>
#include <memory>

#include "admin/session_target.h"
#include "cli/command.h"
#include "cli/db_access.h"
#include "cli/json_text.h"
#include "cli/terminal_text.h"
#include "cli/version.h"
#include "schema/store/session_store.h"

namespace tuna::cli {
namespace {

struct InitFlags {
  std::string label;
  std::string arch;
  int num_cu = 0;
  std::string backend;
  bool detect = false;
  bool json = false;
};

int Fail(const std::string& what, const absl::Status& st) {
  std::cerr << "tuna session " << what << ": " << st.message() << "\n";
  return 1;
}

int Init(const GlobalOptions& global, const InitFlags& f) {
  schema::SessionRecord s;
  s.label = f.label;
  s.tuner_version = VersionLine();
  absl::Status st = f.detect ? admin::DetectSessionTarget({}, &s)
                             : admin::SessionTargetForArch(f.arch, f.num_cu, f.backend, &s);
  if (!st.ok()) return Fail("init", st);
  auto db = OpenCommandDatabase(global);
  if (!db.ok()) return Fail("init", db.status());
  schema::SessionStore store(**db);
  auto id = store.Create(s);
  if (!id.ok()) return Fail("init", id.status());
  if (f.json) {
    std::cout << JsonText({{"session_id", *id},
                           {"arch", s.arch},
                           {"num_cu", s.num_cu},
                           {"backend", s.backend}})
              << "\n";
  } else {
    std::cout << *id << "\n";
  }
  return 0;
}

Json SessionJson(const schema::SessionRecord& s) {
  return {{"session_id", s.id},
          {"arch", s.arch},
          {"num_cu", s.num_cu},
          {"backend", s.backend},
          {"label", s.label},
          {"tuner_version", s.tuner_version},
          {"compiler_versions", s.compiler_versions},
          {"created", s.created}};
}

int List(const GlobalOptions& global, bool json) {
  auto rows = ListRows<schema::SessionStore>(global);
  if (!rows.ok()) return Fail("list", rows.status());
  PrintRows(*rows, json, SessionJson, {"id", "arch", "num_cu", "backend", "created", "label"},
            {6, 12, 8, 9, 28}, [](const schema::SessionRecord& s) {
              return std::vector<std::string>{std::to_string(s.id), s.arch,
                                              std::to_string(s.num_cu), s.backend, s.created,
                                              s.label};
            });
  return 0;
}

}  // namespace

void AddSessionCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("session", "tuning sessions (one campaign for one target)");
  cmd->require_subcommand(1);
  const GlobalOptions* global = ctx.global;
  CommandFn* selected = ctx.selected;

  auto f = std::make_shared<InitFlags>();
  CLI::App* init = cmd->add_subcommand("init", "create a session and print its id");
  init->add_option("-l,--label", f->label, "what this session is for (MITuna's reason)")
      ->required();
  auto* arch = init->add_option("-a,--arch", f->arch, "target arch: gfx90a, gfx942, sm_90, cpu-avx2");
  init->add_option("-n,--num_cu", f->num_cu, "CUs / SMs / threads (default: the arch's usual)")
      ->needs(arch);
  init->add_option("--backend", f->backend, "HIP, CUDA or CPU (default: follows from the arch)")
      ->needs(arch);
  auto* detect = init->add_flag("--detect", f->detect,
                                "use this host's best device (cuda, hip, then cpu)");
  detect->excludes(arch);
  init->add_flag("--json", f->json, "print {\"session_id\": N, ...}");
  init->callback([=] {
    *selected = [=] {
      if (!f->detect && f->arch.empty()) {
        std::cerr << "tuna session init: give --arch (with --num_cu, --backend) or --detect\n";
        return 2;
      }
      return Init(*global, *f);
    };
  });

  auto json = std::make_shared<bool>(false);
  CLI::App* list = cmd->add_subcommand("list", "list sessions");
  list->add_flag("--json", *json, "print one JSON array");
  list->callback([=] { *selected = [=] { return List(*global, *json); }; });
}

}  // namespace tuna::cli
