#include "cli/progress.h"

#include "cli/terminal_text.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "fmt/format.h"

namespace tuna::cli {
namespace {

// Terminal escapes: erase from the cursor to the end of the line.
constexpr const char* kEraseLine = "\x1b[K";
constexpr int kBarCells = 24;
constexpr int kMinBarCells = 10;

int TerminalWidth() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

double Percent(int64_t done, int64_t total) {
  const double p = 100.0 * static_cast<double>(done) / static_cast<double>(total);
  // Never 100.0 % while work is left (99.96 would round up).
  return done < total ? std::min(p, 99.9) : std::min(p, 100.0);
}

std::string Cut(std::string line, int max_width) {
  if (max_width > 0 && static_cast<int>(line.size()) > max_width) line.resize(max_width);
  return line;
}

std::string Eta(const ProgressSnapshot& s) {
  if (s.total <= 0 || s.rate <= 0 || s.done >= s.total) return "";
  return FormatDuration(static_cast<double>(s.total - s.done) / s.rate);
}

}  // namespace

absl::StatusOr<ProgressMode> ParseProgressMode(const std::string& name) {
  if (name == "auto") return ProgressMode::kAuto;
  if (name == "bar") return ProgressMode::kBar;
  if (name == "plain") return ProgressMode::kPlain;
  if (name == "off") return ProgressMode::kOff;
  return absl::InvalidArgumentError("--progress: unknown mode '" + name +
                                    "' (auto, bar, plain, off)");
}

std::string FormatDuration(double seconds) {
  if (!(seconds >= 0)) seconds = 0;
  if (seconds < 10) return fmt::format("{:.1f} s", seconds);
  const int64_t s = static_cast<int64_t>(std::llround(seconds));
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {:02} s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{} h {:02} min", s / 3600, s % 3600 / 60);
  return fmt::format("{} d {:02} h", s / 86400, s % 86400 / 3600);
}

std::string FormatRate(double per_second) {
  if (!(per_second > 0)) return "-";
  if (per_second >= 9999.5) return fmt::format("{:.1f}k/s", per_second / 1000);
  if (per_second >= 99.5) return fmt::format("{:.0f}/s", per_second);
  if (per_second >= 0.95) return fmt::format("{:.1f}/s", per_second);
  // Slow work (tuning jobs) reads better per minute or per hour than as 0.0x/s.
  const double per_minute = per_second * 60;
  if (per_minute >= 0.95) return fmt::format("{:.1f}/min", per_minute);
  return fmt::format("{:.1f}/h", per_minute * 60);
}

std::string ProgressBar(int64_t done, int64_t total, int width) {
  width = std::max(width, 1);
  const double frac =
      total > 0 ? std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0)
                : 1.0;
  int filled = static_cast<int>(frac * width + 0.5);
  if (done < total && filled == width) filled = width - 1;  // full only when done
  return "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
}

std::string FormatProgressLine(const ProgressSnapshot& s, bool bar, int max_width) {
  std::string line = s.command + ": " + s.stage;
  const std::string eta = Eta(s);
  if (bar) {
    // What follows the bar, two spaces apart. A narrow terminal drops the elapsed time, the
    // detail and the rate, in that order, before it drops the bar; the line is cut last.
    auto tail = [&](bool elapsed, bool detail, bool rate) {
      std::vector<std::string> parts;
      if (s.total > 0) {
        parts.push_back(absl::StrCat(fmt::format("{:5.1f}%", Percent(s.done, s.total)), "  ",
                                     s.done, "/", s.total));
      } else if (s.done > 0) {
        parts.push_back(absl::StrCat(s.done));
      }
      if (rate && s.rate > 0) parts.push_back(FormatRate(s.rate));
      if (elapsed) parts.push_back(FormatDuration(s.elapsed_s));
      if (!eta.empty()) parts.push_back("ETA " + eta);
      if (detail && !s.detail.empty()) parts.push_back(s.detail);
      return absl::StrJoin(parts, "  ");
    };
    const std::string full = tail(true, true, true);
    if (s.total <= 0) return Cut(absl::StrCat(line, "  ", full), max_width);
    for (const auto& t : {full, tail(false, true, true), tail(false, false, true),
                          tail(false, false, false)}) {
      const int room = max_width > 0 ? max_width - static_cast<int>(line.size() + t.size()) - 4
                                     : kBarCells;
      if (room >= kMinBarCells) {
        return absl::StrCat(line, " ", ProgressBar(s.done, s.total, std::min(room, kBarCells)),
                            " ", t);
      }
    }
    return Cut(absl::StrCat(line, "  ", full), max_width);
  }
  if (s.total > 0) {
    absl::StrAppend(&line, " ", s.done, "/", s.total, " (",
                    fmt::format("{:.1f}%", Percent(s.done, s.total)), ")");
  } else if (s.done > 0) {
    absl::StrAppend(&line, " ", s.done);
  }
  if (s.rate > 0) absl::StrAppend(&line, ", ", FormatRate(s.rate));
  absl::StrAppend(&line, ", ", FormatDuration(s.elapsed_s), " elapsed");
  if (!eta.empty()) absl::StrAppend(&line, ", ETA ", eta);
  if (!s.detail.empty()) absl::StrAppend(&line, ", ", s.detail);
  return Cut(line, max_width);
}

std::string FormatStageDone(const ProgressSnapshot& s) {
  std::string line = absl::StrCat(s.command, ": ", s.stage, " ", s.done);
  if (s.total > 0 && s.done != s.total) absl::StrAppend(&line, "/", s.total);
  absl::StrAppend(&line, " in ", FormatDuration(s.elapsed_s));
  if (s.rate > 0) absl::StrAppend(&line, " (", FormatRate(s.rate), ")");
  if (!s.detail.empty()) absl::StrAppend(&line, ", ", s.detail);
  return line;
}

ProgressOptions StderrProgressOptions(ProgressMode mode) {
  ProgressOptions o;
  o.mode = mode;
  if (mode == ProgressMode::kAuto) {
    o.mode = isatty(STDERR_FILENO) == 1 ? ProgressMode::kBar : ProgressMode::kPlain;
  }
  return o;
}

ProgressOptions StderrProgressOptions(const std::string& mode) {
  auto m = ParseProgressMode(mode);
  return StderrProgressOptions(m.ok() ? *m : ProgressMode::kAuto);
}

Progress::Progress(std::string command, ProgressOptions options)
    : command_(std::move(command)),
      options_(std::move(options)),
      // Only StderrProgressOptions knows the terminal; kAuto passed here gets plain lines.
      mode_(options_.mode == ProgressMode::kAuto ? ProgressMode::kPlain : options_.mode),
      start_(options_.now()) {
  if (options_.ticker && mode_ != ProgressMode::kOff) {
    ticker_ = std::thread([this] { TickerLoop(); });
  }
}

Progress::~Progress() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  Finish();
}

void Progress::TickerLoop() {
  // Bar: redraw often enough for the elapsed time to tick; plain: the line interval is seconds.
  const absl::Duration period =
      mode_ == ProgressMode::kBar ? options_.redraw_every : absl::Seconds(1);
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_) {
    wake_.wait_for(l, absl::ToChronoNanoseconds(period));
    if (!stop_) MaybePrintLocked();
  }
}

void Progress::Emit(const std::string& text) {
  if (options_.write) {
    options_.write(text);
    return;
  }
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

ProgressSnapshot Progress::SnapshotLocked(absl::Time now) const {
  ProgressSnapshot s;
  s.command = command_;
  s.stage = stage_;
  s.done = done_;
  s.total = total_;
  s.detail = detail_;
  s.elapsed_s = absl::ToDoubleSeconds(now - stage_begin_);
  if (!samples_.empty()) {
    const auto& [t0, d0] = samples_.front();
    const double span = absl::ToDoubleSeconds(now - t0);
    if (span >= 1 && done_ > d0) s.rate = static_cast<double>(done_ - d0) / span;
  }
  return s;
}

void Progress::Update(std::string_view stage, int64_t done, int64_t total,
                      std::string_view detail) {
  if (mode_ == ProgressMode::kOff) return;
  std::lock_guard<std::mutex> l(mu_);
  UpdateLocked(stage, done, total, detail);
}

void Progress::UpdateLocked(std::string_view stage, int64_t done, int64_t total,
                            std::string_view detail) {
  if (!active_ || stage != stage_) {
    EndStageLocked(/*summary=*/true);
    active_ = true;
    stage_ = std::string(stage);
    stage_begin_ = options_.now();
    samples_.clear();
    shown_ = false;
  }
  const absl::Time now = options_.now();
  const absl::Duration window =
      std::clamp((now - stage_begin_) / 3, absl::Seconds(10), absl::Hours(1));
  // About 20 samples a window keep memory small for stages of days; the oldest one kept is the
  // last at or before the window's start.
  if (samples_.empty() || now - samples_.back().first >= window / 20) {
    samples_.emplace_back(now, done);
  }
  while (samples_.size() >= 2 && samples_[1].first <= now - window) samples_.pop_front();
  done_ = done;
  total_ = total;
  detail_ = std::string(detail);
  MaybePrintLocked();
}

void Progress::MaybePrintLocked() {
  if (!active_) return;
  const absl::Time now = options_.now();
  const absl::Duration elapsed = now - stage_begin_;
  if (mode_ == ProgressMode::kBar) {
    if (elapsed < options_.show_after) return;
    if (bar_visible_ && now - last_print_ < options_.redraw_every) return;
    const int width = options_.width > 0 ? options_.width : TerminalWidth();
    // One column short of the width: a full-width line makes some terminals wrap.
    Emit("\r" + FormatProgressLine(SnapshotLocked(now), true, width - 1) + kEraseLine + "\r");
    bar_visible_ = true;
  } else if (mode_ == ProgressMode::kPlain) {
    if (elapsed < options_.line_every) return;
    // A tenth of the stage's age: every 5 s at first, every minute for a stage of hours.
    const absl::Duration interval =
        std::clamp(elapsed / 10, options_.line_every, options_.line_every_max);
    if (shown_ && now - last_print_ < interval) return;
    Emit(FormatProgressLine(SnapshotLocked(now), false) + "\n");
  } else {
    return;
  }
  shown_ = true;
  last_print_ = now;
}

void Progress::EndStageLocked(bool summary) {
  const absl::Time now = options_.now();
  if (active_ && shown_ && summary) {
    ProgressSnapshot s = SnapshotLocked(now);
    s.rate = s.elapsed_s > 0 ? static_cast<double>(done_) / s.elapsed_s : 0;
    const std::string line = FormatStageDone(s);
    Emit(mode_ == ProgressMode::kBar ? "\r" + line + kEraseLine + "\n" : line + "\n");
  } else if (bar_visible_) {
    Emit(std::string("\r") + kEraseLine);
  }
  bar_visible_ = false;
  active_ = false;
}

void Progress::Note(const std::string& line) {
  if (mode_ == ProgressMode::kOff) return;
  std::lock_guard<std::mutex> l(mu_);
  if (mode_ == ProgressMode::kBar) {
    Emit("\r" + line + kEraseLine + "\n");
    if (bar_visible_) {
      bar_visible_ = false;  // scrolled up: draw it again below the note at once
      MaybePrintLocked();
    }
  } else {
    Emit(line + "\n");
  }
}

void Progress::Finish() {
  std::lock_guard<std::mutex> l(mu_);
  EndStageLocked(/*summary=*/true);
}

void Progress::Clear() {
  std::lock_guard<std::mutex> l(mu_);
  EndStageLocked(/*summary=*/false);
}

void Progress::Tick() {
  std::lock_guard<std::mutex> l(mu_);
  MaybePrintLocked();
}

double Progress::Seconds() const { return absl::ToDoubleSeconds(options_.now() - start_); }

std::function<void(std::string_view, int64_t, int64_t)> Progress::StageCallback() {
  return [this](std::string_view stage, int64_t done, int64_t total) {
    Update(stage, done, total);
  };
}

std::function<void(int64_t, int64_t)> Progress::CountCallback(std::string stage) {
  return [this, stage = std::move(stage)](int64_t done, int64_t total) {
    Update(stage, done, total);
  };
}

int Progress::Fail(const absl::Status& status) {
  Clear();
  std::fprintf(stderr, "tuna %s: %s\n", command_.c_str(),
               EscapeControlBytes(status.message()).c_str());
  return 1;
}

}  // namespace tuna::cli
