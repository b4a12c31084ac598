// `tuna status [--session_id N] [--watch] [--json]`: job progress (admin/status.h).
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include "admin/status.h"
#include "cli/command.h"
#include "cli/db_access.h"
#include "cli/json_text.h"

namespace tuna::cli {
namespace {

struct Flags {
  int64_t session_id = 0;  // 0: all sessions
  bool watch = false;
  int interval = 10;
  int window = 10;
  bool json = false;
};

std::string Fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

void PrintJson(const Flags& f, const admin::StatusReport& r) {
  std::cout << "{\"session_id\": " << (f.session_id ? std::to_string(f.session_id) : "null")
            << ", \"total\": " << r.total << ", \"finished\": " << r.finished
            << ", \"in_progress\": " << r.in_progress
            << ", \"progress_percent\": " << Fixed(r.progress_percent, 2)
            << ", \"finished_last_window\": " << r.finished_recently
            << ", \"window_minutes\": " << f.window
            << ", \"rate_per_minute\": " << Fixed(r.rate_per_minute, 3) << ", \"eta_minutes\": "
            << (r.eta_minutes ? Fixed(*r.eta_minutes, 1) : "null") << ", \"by_state\": {";
  for (size_t k = 0; k < r.by_state.size(); ++k) {
    std::cout << (k ? ", " : "") << JsonQuote(r.by_state[k].state) << ": " << r.by_state[k].jobs;
  }
  std::cout << "}, \"by_tag\": {";
  std::map<std::string, std::map<std::string, int64_t>> tags;
  for (const auto& t : r.by_tag) tags[t.tag][t.state] = t.jobs;
  bool first_tag = true;
  for (const auto& [tag, states] : tags) {
    std::cout << (first_tag ? "" : ", ") << JsonQuote(tag) << ": {";
    first_tag = false;
    bool first = true;
    for (const auto& [state, n] : states) {
      std::cout << (first ? "" : ", ") << JsonQuote(state) << ": " << n;
      first = false;
    }
    std::cout << "}";
  }
  std::cout << "}, \"errors\": [";
  for (size_t k = 0; k < r.errors.size(); ++k) {
    std::cout << (k ? ", " : "") << "{\"state\": " << JsonQuote(r.errors[k].state)
              << ", \"reason\": " << JsonQuote(r.errors[k].reason)
              << ", \"jobs\": " << r.errors[k].jobs << "}";
  }
  std::cout << "]}\n";
}

void PrintText(const Flags& f, const admin::StatusReport& r) {
  std::cout << (f.session_id ? "session " + std::to_string(f.session_id) : "all sessions")
            << ": " << r.total << " jobs, " << r.finished << " finished ("
            << Fixed(r.progress_percent, 1) << "%), " << r.in_progress << " in progress\n";
  std::cout << "rate: " << r.finished_recently << " finished in the last " << f.window
            << " min (" << Fixed(r.rate_per_minute, 2) << "/min), ETA "
            << (r.eta_minutes ? Fixed(*r.eta_minutes, 1) + " min" : "unknown") << "\n";
  std::cout << "by state:\n";
  for (const auto& s : r.by_state) {
    if (s.jobs > 0) std::printf("  %-16s %lld\n", s.state.c_str(), static_cast<long long>(s.jobs));
  }
  std::fflush(stdout);
  if (!r.by_tag.empty()) {
    std::map<std::string, std::map<std::string, int64_t>> tags;
    for (const auto& t : r.by_tag) tags[t.tag][t.state] = t.jobs;
    std::cout << "by tag:\n";
    for (const auto& [tag, states] : tags) {
      std::cout << "  " << tag << ":";
      for (const auto& [state, n] : states) std::cout << " " << state << "=" << n;
      std::cout << "\n";
    }
  }
  if (!r.errors.empty()) {
    std::cout << "failures by reason:\n";
    for (const auto& e : r.errors) {
      std::cout << "  " << e.jobs << " " << e.state << ": "
                << (e.reason.empty() ? "(no reason recorded)" : e.reason) << "\n";
    }
  }
}

int Run(const GlobalOptions& global, const Flags& f) {
  auto db = OpenCommandDatabase(global, /*pool_size=*/1);
  if (!db.ok()) {
    std::cerr << "tuna status: " << db.status().message() << "\n";
    return 1;
  }
  admin::StatusOptions o;
  if (f.session_id > 0) o.session_id = f.session_id;
  o.rate_window_minutes = f.window;
  for (;;) {
    auto r = admin::CollectStatus(**db, o);
    if (!r.ok()) {
      std::cerr << "tuna status: " << r.status().message() << "\n";
      return 1;
    }
    if (f.json) {
      PrintJson(f, *r);
    } else {
      PrintText(f, *r);
    }
    std::cout.flush();
    const bool done = r->total > 0 && r->finished == r->total;
    if (!f.watch || done) return 0;
    std::this_thread::sleep_for(std::chrono::seconds(f.interval));
    if (!f.json) std::cout << "\n";
  }
}

}  // namespace

void AddStatusCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand(
      "status", "job progress: by state and tag, rate, ETA, failures grouped by reason");
  auto f = std::make_shared<Flags>();
  cmd->add_option("--session_id", f->session_id, "one session (default: all)");
  cmd->add_flag("--watch", f->watch, "repeat every --interval seconds until every job finished");
  cmd->add_option("--interval", f->interval, "seconds between --watch updates")
      ->check(CLI::Range(1, 3600));
  cmd->add_option("--window", f->window, "minutes over which the rate is measured")
      ->check(CLI::Range(1, 10080));
  cmd->add_flag("--json", f->json, "print one JSON object (one per update with --watch)");
  const GlobalOptions* global = ctx.global;
  CommandFn* selected = ctx.selected;
  cmd->callback([=] { *selected = [=] { return Run(*global, *f); }; });
}

}  // namespace tuna::cli
