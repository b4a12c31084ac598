// `tuna status [--session_id N] [--watch] [--json]`: job progress (admin/status.h).
// With --watch on a terminal it is a live view redrawn every --interval seconds: progress bars
// per step and per tag, jobs per state, throughput, ETA, the workers with their device and
// current jobs (admin/worker_activity.h), and the top failure reasons.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "admin/status.h"
#include "admin/worker_activity.h"
#include "cli/command.h"
#include "cli/db_access.h"
#include "cli/json_text.h"
#include "cli/progress.h"
#include "jobs/job_state.h"

namespace tuna::cli {
namespace {

struct Flags {
  int64_t session_id = 0;  // 0: all sessions
  bool watch = false;
  int interval = 10;
  int window = 10;
  bool json = false;
  int worker_minutes = 5;  // live view: workers seen within this many minutes
};

std::string Fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

void PrintJson(const Flags& f, const admin::StatusReport& r) {
  Json by_state = Json::object();
  for (const auto& s : r.by_state) by_state[s.state] = s.jobs;
  std::map<std::string, std::map<std::string, int64_t>> tags;
  for (const auto& t : r.by_tag) tags[t.tag][t.state] = t.jobs;
  Json by_tag = Json::object();
  for (const auto& [tag, states] : tags) by_tag[tag] = states;
  Json errors = Json::array();
  for (const auto& e : r.errors) {
    errors.push_back({{"state", e.state}, {"reason", e.reason}, {"jobs", e.jobs}});
  }
  std::cout << JsonText({{"session_id", f.session_id ? Json(f.session_id) : Json()},
                         {"total", r.total},
                         {"finished", r.finished},
                         {"in_progress", r.in_progress},
                         {"progress_percent", JsonRounded(r.progress_percent, 2)},
                         {"finished_last_window", r.finished_recently},
                         {"window_minutes", f.window},
                         {"rate_per_minute", JsonRounded(r.rate_per_minute, 3)},
                         {"eta_minutes", r.eta_minutes ? Json(JsonRounded(*r.eta_minutes, 1)) : Json()},
                         {"by_state", by_state},
                         {"by_tag", by_tag},
                         {"errors", errors}})
            << "\n";
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

// ---- the live view (--watch, text) ----

std::string ProgressLine(const std::string& name, int name_width, int64_t done, int64_t total,
                         int bar_width) {
  char buf[256];
  const double pct = total > 0 ? 100.0 * static_cast<double>(done) / total : 100.0;
  std::snprintf(buf, sizeof(buf), "  %-*.*s %s %5.1f%%  %lld/%lld", name_width, name_width,
                name.c_str(), ProgressBar(done, total, bar_width).c_str(), pct,
                static_cast<long long>(done), static_cast<long long>(total));
  return buf;
}

std::string Minutes(double m) {
  if (m < 1) return Fixed(m * 60, 0) + " s";
  if (m < 120) return Fixed(m, 1) + " min";
  return Fixed(m / 60, 1) + " h";
}

int TerminalWidth() {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
  return 120;
}

struct LiveState {
  bool have_previous = false;
  int64_t previous_finished = 0;
  absl::Time previous_time;
};

using StateCounts = std::map<jobs::JobState, int64_t>;

// The title, job totals and throughput lines; remembers this frame's count for the next rate.
void HeaderLines(const Flags& f, const admin::StatusReport& r, StateCounts& st, LiveState* live,
                 std::vector<std::string>& out) {
  using jobs::JobState;
  const absl::Time now = absl::Now();
  out.push_back("tuna status -- " +
                (f.session_id ? "session " + std::to_string(f.session_id) : "all sessions") +
                " -- " + absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", now, absl::UTCTimeZone()) +
                " -- every " + std::to_string(f.interval) + " s (Ctrl-C quits)");
  out.push_back("jobs " + std::to_string(r.total) + " | finished " + std::to_string(r.finished) +
                " (" + Fixed(r.progress_percent, 1) + "%) | in progress " +
                std::to_string(r.in_progress) + " | errored " +
                std::to_string(st[JobState::kErrored]) + " | failed " +
                std::to_string(st[JobState::kFailed]));
  std::string now_rate = "-";
  if (live->have_previous) {
    const double minutes = absl::ToDoubleMinutes(now - live->previous_time);
    if (minutes > 0) {
      now_rate = Fixed(static_cast<double>(r.finished - live->previous_finished) / minutes, 1);
    }
  }
  live->have_previous = true;
  live->previous_finished = r.finished;
  live->previous_time = now;
  out.push_back("throughput " + now_rate + " jobs/min now, " + Fixed(r.rate_per_minute, 1) +
                " jobs/min over " + std::to_string(f.window) + " min | ETA " +
                (r.eta_minutes ? Minutes(*r.eta_minutes) : std::string("unknown")));
  out.push_back("");
}

// Progress bars per step and per tag (at most 8 tags), then the jobs per state.
void ProgressLines(const admin::StatusReport& r, StateCounts& st, std::vector<std::string>& out) {
  using jobs::JobState;
  // Steps: compile is done once a job is past it; both count against the jobs that will run.
  const int64_t runnable = r.total - st[JobState::kNotApplicable] - st[JobState::kCancelled];
  const int64_t compiled =
      st[JobState::kCompiled] + st[JobState::kEvalStart] + st[JobState::kEvaluated];
  out.push_back("steps");
  out.push_back(ProgressLine("compile", 12, compiled, runnable, 40) + "   running " +
                std::to_string(st[JobState::kCompileStart]));
  out.push_back(ProgressLine("eval", 12, st[JobState::kEvaluated], runnable, 40) + "   running " +
                std::to_string(st[JobState::kEvalStart]));
  if (!r.by_tag.empty()) {
    std::map<std::string, std::pair<int64_t, int64_t>> tags;  // finished, total
    for (const auto& t : r.by_tag) {
      auto& v = tags[t.tag];
      v.second += t.jobs;
      const std::optional<jobs::JobState> state = jobs::ParseJobState(t.state);
      if (state && jobs::IsTerminal(*state)) v.first += t.jobs;
    }
    out.push_back("tags");
    int shown = 0;
    for (const auto& [tag, v] : tags) {
      if (++shown > 8) {
        out.push_back("  ... " + std::to_string(tags.size() - 8) + " more tags");
        break;
      }
      out.push_back(ProgressLine(tag, 12, v.first, v.second, 40));
    }
  }
  std::string states = "states  ";
  for (const auto& s : r.by_state) {
    if (s.jobs > 0) states += " " + s.state + "=" + std::to_string(s.jobs);
  }
  out.push_back("");
  out.push_back(states);
  out.push_back("");
}

// The workers seen recently (at most 12) with their current jobs.
void WorkerLines(const Flags& f,
                 const absl::StatusOr<std::vector<admin::WorkerActivity>>& workers,
                 std::vector<std::string>& out) {
  if (!workers.ok()) {
    out.push_back("workers: unavailable (" + std::string(workers.status().message()) + ")");
    return;
  }
  out.push_back("workers (" + std::to_string(workers->size()) + " devices seen in the last " +
                std::to_string(f.worker_minutes) + " min)");
  char buf[512];
  std::snprintf(buf, sizeof(buf), "  %-18s %3s %-5s %-10s %4s %6s  %s", "HOST", "DEV", "BACK",
                "ARCH", "CU", "SEEN", "CURRENT JOBS");
  out.push_back(buf);
  int shown = 0;
  for (const auto& w : *workers) {
    if (++shown > 12) {
      out.push_back("  ... " + std::to_string(workers->size() - 12) + " more");
      break;
    }
    std::string jobs;
    for (size_t k = 0; k < w.current_jobs.size(); ++k) {
      jobs += (k ? ", " : "") + w.current_jobs[k];
    }
    std::snprintf(buf, sizeof(buf), "  %-18.18s %3d %-5.5s %-10.10s %4d %5.0fs  %s",
                  w.host.c_str(), w.device_index, w.backend.c_str(), w.arch.c_str(), w.num_cu,
                  w.seconds_since_seen, jobs.empty() ? "-" : jobs.c_str());
    out.push_back(buf);
  }
}

// One frame of the live view as lines (the caller clears the screen and truncates to width).
std::vector<std::string> LiveFrame(const Flags& f, const admin::StatusReport& r,
                                   const absl::StatusOr<std::vector<admin::WorkerActivity>>&
                                       workers,
                                   LiveState* live) {
  std::vector<std::string> out;
  StateCounts st;
  for (const auto& s : r.by_state) {
    if (auto state = jobs::ParseJobState(s.state)) st[*state] = s.jobs;
  }
  HeaderLines(f, r, st, live, out);
  ProgressLines(r, st, out);
  WorkerLines(f, workers, out);
  if (!r.errors.empty()) {
    out.push_back("");
    out.push_back("top failure reasons");
    for (size_t k = 0; k < r.errors.size() && k < 5; ++k) {
      const auto& e = r.errors[k];
      out.push_back("  " + std::to_string(e.jobs) + " " + e.state + ": " +
                    (e.reason.empty() ? "(no reason recorded)" : e.reason));
    }
  }
  return out;
}

void PrintLive(const std::vector<std::string>& lines, bool tty) {
  const int width = tty ? TerminalWidth() : 1 << 20;
  std::string frame = tty ? "\x1b[H\x1b[2J" : "";
  for (std::string l : lines) {
    // Reasons can be long multi-line errors: one screen line each.
    std::replace(l.begin(), l.end(), '\n', ' ');
    if (static_cast<int>(l.size()) > width) l = l.substr(0, width - 3) + "...";
    frame += l + "\n";
  }
  std::cout << frame << std::flush;
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
  const bool live = f.watch && !f.json;
  const bool tty = isatty(STDOUT_FILENO) == 1;
  LiveState live_state;
  for (;;) {
    auto r = admin::CollectStatus(**db, o);
    if (!r.ok()) {
      std::cerr << "tuna status: " << r.status().message() << "\n";
      return 1;
    }
    if (f.json) {
      PrintJson(f, *r);
    } else if (live) {
      std::optional<int64_t> session;
      if (f.session_id > 0) session = f.session_id;
      auto workers =
          admin::ReadWorkerActivity(**db, session, absl::Minutes(f.worker_minutes));
      PrintLive(LiveFrame(f, *r, workers, &live_state), tty);
    } else {
      PrintText(f, *r);
    }
    std::cout.flush();
    const bool done = r->total > 0 && r->finished == r->total;
    if (!f.watch || done) return 0;
    std::this_thread::sleep_for(std::chrono::seconds(f.interval));
    if (!f.json && !tty) std::cout << "\n";
  }
}

}  // namespace

void AddStatusCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand(
      "status", "job progress: by state and tag, rate, ETA, failures grouped by reason");
  auto f = std::make_shared<Flags>();
  AddSessionIdOption(cmd, &f->session_id, "one session (default: all)", /*required=*/false);
  cmd->add_flag("--watch", f->watch,
                "live view redrawn every --interval seconds until every job finished: progress "
                "per step and tag, throughput, ETA, workers and their jobs, top failures");
  cmd->add_option("--interval", f->interval, "seconds between --watch updates")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  cmd->add_option("--workers-within", f->worker_minutes,
                  "--watch: show workers seen within this many minutes")
      ->check(CLI::Range(1, 10080))
      ->capture_default_str();
  cmd->add_option("--window", f->window, "minutes over which the rate is measured")
      ->check(CLI::Range(1, 10080));
  cmd->add_flag("--json", f->json, "print one JSON object (one per update with --watch)");
  const GlobalOptions* global = ctx.global;
  CommandFn* selected = ctx.selected;
  cmd->callback([=] { *selected = [=] { return Run(*global, *f); }; });
}

}  // namespace tuna::cli
