#include "tests/distributed/worker_test_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "admin/applicability.h"
#include "admin/import_configs.h"
#include "admin/job_loader.h"
#include "admin/solver_records.h"
#include "schema/store/session_store.h"
#include "schema/store/solver_store.h"
#include "tuner_core/backend/registry.h"

namespace tuna::testing {

absl::StatusOr<int64_t> LoadCpuWorkload(schema::Database& db, const solver::SolverRegistry& registry,
                                        const std::string& lines, const std::string& tag,
                                        const std::vector<std::string>& solvers,
                                        const std::vector<std::string>& kinds) {
  admin::ImportOptions io;
  io.tag = tag;
  auto imported = admin::ImportDriverText(db, lines, io);
  if (!imported.ok()) return imported.status();
  if (auto st = schema::SolverStore(db).Sync(admin::SolverRecords(registry)); !st.ok()) return st.status();
  auto cpu = backend::OpenBackend(backend::BackendKind::kCpu, backend::DetectOptions::FromEnv());
  if (!cpu.ok()) return cpu.status();
  auto devices = (*cpu)->ListDevices();
  if (!devices.ok()) return devices.status();
  if (devices->empty()) return absl::UnavailableError("no cpu device");
  schema::SessionRecord s;
  s.arch = (*devices)[0].arch;
  s.num_cu = (*devices)[0].compute_units;
  s.backend = "CPU";
  s.label = "worker test";
  s.tuner_version = "test";
  auto session = schema::SessionStore(db).Create(s);
  if (!session.ok()) return session.status();
  admin::ApplicabilityOptions ao;
  ao.session_id = *session;
  ao.tag = tag;
  if (auto st = admin::UpdateApplicability(db, registry, ao); !st.ok()) return st.status();
  admin::LoadJobsOptions lo;
  lo.session_id = *session;
  lo.tag = tag;
  for (const std::string& k : kinds) {
    lo.fin_steps.push_back("miopen_" + k + "_compile");
    lo.fin_steps.push_back("miopen_" + k + "_eval");
  }
  lo.only_applicable = true;
  lo.solvers = solvers;
  if (auto st = admin::LoadJobs(db, registry, lo); !st.ok()) return st.status();
  return *session;
}

int64_t CountRows(schema::Database& db, const std::string& sql) {
  auto r = db.Query(sql);
  if (!r.ok() || r->empty()) return -1;
  return (*r)[0].Int(0);
}

std::string Runfile(const std::string& path) {
  for (const char* var : {"TEST_SRCDIR", "RUNFILES_DIR"}) {
    const char* dir = std::getenv(var);
    if (dir == nullptr) continue;
    for (const std::string& ws : {std::string("tuna"), std::string("__main__")}) {
      const std::string p = absl::StrCat(dir, "/", ws, "/", path);
      if (std::filesystem::exists(p)) return p;
    }
  }
  return "";
}

pid_t Spawn(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<std::string> args = argv;
  std::vector<char*> c;
  for (auto& a : args) c.push_back(a.data());
  c.push_back(nullptr);
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_t pid = fork();
  if (pid == 0) {
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execv(c[0], c.data());
    _exit(127);
  }
  if (fd >= 0) close(fd);
  return pid;
}

std::string TestOutputDir() {
  const char* t = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  if (t == nullptr) t = std::getenv("TEST_TMPDIR");
  return t ? t : "/tmp";
}

bool WaitUntil(int seconds, const std::function<bool()>& done, std::chrono::milliseconds every) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(every);
  }
  return done();
}

int WaitFor(pid_t pid, int seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < until) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return -1;
}

std::string ConvDriverLines(int n, int batch, int channels, int h0, int w) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    absl::StrAppend(&out, "./bin/MIOpenDriver conv -n ", batch, " -c ", channels, " -H ", h0 + i, " -W ", w, " -k ",
                    channels, " -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -g 1 -F 1 -t 1\n");
  }
  return out;
}

std::string SmallDriverLines(int n) { return ConvDriverLines(n, 1, 4, 4, 6); }

}  // namespace tuna::testing
