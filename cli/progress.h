// Progress of the long subcommands (import, import-db, applicability, jobs load, export, tune) on
// stderr, and the elapsed time for their final summaries.
//
// A command reports stages: Update("configs written", done, total). Whether anything is printed
// depends on the mode (ProgressMode):
//   bar    stderr is a terminal: one line redrawn in place, at most every `redraw_every`, once a
//          stage has run for `show_after` ("import: configs written [####....] 42%  8800/20736
//          3.6k/s  ETA 3 s"). The line is parked with the cursor in column 0, so any line written
//          after it (a log line, an executor child's log) starts over it; the text logger clears
//          the rest of the line first (cli/logging.cc), so no remnant of the bar is left.
//   plain  not a terminal (a log file, a pipe, systemd): a plain line once a stage has run for
//          `line_every`, then every `line_every`, backing off to one every `line_every_max` for
//          stages of hours or days, so a log never floods.
//   off    nothing.
// A stage that printed anything ends with one line "N in T (rate)" when the next stage starts or
// on Finish(); stages too short to show print nothing at all.
//
// Threads: every method may be called from any thread (one mutex). With `ticker`, a background
// thread redraws while no update arrives, so a stage that reports nothing for a while (one long
// SQL statement, a file write) still shows that it is running.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>

#include "absl/status/status.h"
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tuna::cli {

// kAuto: kBar when stderr is a terminal, else kPlain (resolved by StderrProgressOptions).
enum class ProgressMode { kAuto, kOff, kPlain, kBar };

// "auto", "bar", "plain" or "off"; InvalidArgument otherwise.
absl::StatusOr<ProgressMode> ParseProgressMode(const std::string& name);

// What one progress line shows.
struct ProgressSnapshot {
  std::string command;    // "import"
  std::string stage;      // "configs written"
  int64_t done = 0;
  int64_t total = 0;      // 0: unknown
  std::string detail;     // appended as is ("3 failed, 2 running"); may be empty
  double elapsed_s = 0;   // since the stage began
  double rate = 0;        // items per second, recently; 0: not known yet
};

// "0.4 s", "12 s", "3 min 05 s", "2 h 05 min", "3 d 04 h".
std::string FormatDuration(double seconds);
// Items per second in the unit that reads best: "12.3k/s", "250/s", "4.2/s", "30/min", "2.5/h".
std::string FormatRate(double per_second);
// "[#####.....]" with `width` cells between the brackets (done/total, full when total <= 0).
std::string ProgressBar(int64_t done, int64_t total, int width);
// The line of a running stage: with `bar` for a terminal (bar, percent, counts, rate, ETA), else
// plain text for logs. max_width > 0 cuts the line to that many characters.
std::string FormatProgressLine(const ProgressSnapshot& s, bool bar, int max_width = 0);
// The line that ends a stage: "import: configs written 20736 in 2.3 s (9.0k/s)".
std::string FormatStageDone(const ProgressSnapshot& s);

struct ProgressOptions {
  ProgressMode mode = ProgressMode::kOff;
  absl::Duration show_after = absl::Seconds(1);       // bar: quiet for shorter stages
  absl::Duration redraw_every = absl::Milliseconds(200);
  absl::Duration line_every = absl::Seconds(5);       // plain: first line and least interval
  absl::Duration line_every_max = absl::Seconds(60);  // plain: interval for very long stages
  int width = 0;         // bar: line width; 0 asks the terminal (80 when it cannot say)
  bool ticker = true;    // background redraws (tests turn it off and call Tick)
  std::function<absl::Time()> now = [] { return absl::Now(); };
  std::function<void(const std::string&)> write;  // default: stderr, flushed
};

// Options for stderr: kAuto becomes kBar or kPlain by whether stderr is a terminal.
ProgressOptions StderrProgressOptions(ProgressMode mode);
// The same from a --progress value (CLI11 has checked it; anything else counts as "auto").
ProgressOptions StderrProgressOptions(const std::string& mode);

class Progress {
 public:
  Progress(std::string command, ProgressOptions options);
  ~Progress();  // Finish()
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // A stage with a new name ends the current one first; its time counts from this call, so
  // announce a stage when it begins (done 0). done/total are absolute.
  void Update(std::string_view stage, int64_t done, int64_t total, std::string_view detail = "");
  // A message line (stage announcements): printed at once in bar and plain mode, above the bar.
  void Note(const std::string& line);
  // Ends the current stage (its "done" line if it was shown); call before printing a summary.
  void Finish();
  // Removes the bar without a "done" line; call before printing an error.
  void Clear();
  // A failed command's end: Clear(), then `tuna <command>: <message>` (control bytes escaped)
  // on stderr. Returns 1, the exit code.
  int Fail(const absl::Status& status);
  // Prints if a line is due (the ticker thread calls this; tests call it with a fake clock).
  void Tick();
  // Since construction: the command's time for its summary.
  double Seconds() const;

  // Adapters for the callbacks of admin/, exporter/ and schema/ (they call these on any thread).
  std::function<void(std::string_view, int64_t, int64_t)> StageCallback();
  std::function<void(int64_t, int64_t)> CountCallback(std::string stage);

 private:
  void UpdateLocked(std::string_view stage, int64_t done, int64_t total, std::string_view detail);
  void EndStageLocked(bool summary);
  void MaybePrintLocked();
  ProgressSnapshot SnapshotLocked(absl::Time now) const;
  void Emit(const std::string& text);
  void TickerLoop();

  const std::string command_;
  const ProgressOptions options_;
  const ProgressMode mode_;  // never kAuto
  const absl::Time start_;

  mutable std::mutex mu_;
  bool active_ = false;       // a stage is running
  std::string stage_, detail_;
  int64_t done_ = 0, total_ = 0;
  absl::Time stage_begin_;    // the stage's first update (callers announce a stage with 0 done)
  // (time, done) of recent updates: the rate is measured over the last third of the stage
  // (10 s to 1 h), so a slow start or a change of pace does not bend the ETA for long.
  std::deque<std::pair<absl::Time, int64_t>> samples_;
  bool shown_ = false;        // something of this stage was printed
  bool bar_visible_ = false;  // bar mode: the bar is on the screen's last line
  absl::Time last_print_;

  std::condition_variable wake_;
  bool stop_ = false;
  std::thread ticker_;
};

}  // namespace tuna::cli
