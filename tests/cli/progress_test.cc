// cli/progress.h: the formatting (durations, rates, bars, lines) and what each mode prints, with
// a fake clock and a captured output (no ticker thread, no sleeping, no terminal needed).
#include "cli/progress.h"

#include <string>
#include <vector>

#include "catch2/catch.hpp"

namespace tuna::cli {
namespace {

// A Progress on a fake clock; everything it writes is appended to `out`, one write per entry.
struct Harness {
  absl::Time now = absl::FromUnixSeconds(1000000);
  std::vector<std::string> writes;

  ProgressOptions Options(ProgressMode mode, int width = 100) {
    ProgressOptions o;
    o.mode = mode;
    o.ticker = false;
    o.width = width;
    o.now = [this] { return now; };
    o.write = [this](const std::string& s) { writes.push_back(s); };
    return o;
  }
  void Advance(double seconds) { now += absl::Seconds(seconds); }
  std::string All() const {
    std::string s;
    for (const auto& w : writes) s += w;
    return s;
  }
};

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("durations read in the unit that fits", "[cli][progress]") {
  CHECK(FormatDuration(0) == "0.0 s");
  CHECK(FormatDuration(0.44) == "0.4 s");
  CHECK(FormatDuration(9.94) == "9.9 s");
  CHECK(FormatDuration(12.4) == "12 s");
  CHECK(FormatDuration(185) == "3 min 05 s");
  CHECK(FormatDuration(2 * 3600 + 5 * 60 + 10) == "2 h 05 min");
  CHECK(FormatDuration(3 * 86400 + 4 * 3600) == "3 d 04 h");
  CHECK(FormatDuration(-1) == "0.0 s");
}

TEST_CASE("rates switch to per minute and per hour for slow work", "[cli][progress]") {
  CHECK(FormatRate(12345) == "12.3k/s");
  CHECK(FormatRate(250.2) == "250/s");
  CHECK(FormatRate(4.21) == "4.2/s");
  CHECK(FormatRate(0.5) == "30.0/min");
  CHECK(FormatRate(1.0 / 1800) == "2.0/h");
  CHECK(FormatRate(0) == "-");
}

TEST_CASE("the bar fills with the work and is full only when done", "[cli][progress]") {
  CHECK(ProgressBar(0, 100, 10) == "[..........]");
  CHECK(ProgressBar(50, 100, 10) == "[#####.....]");
  CHECK(ProgressBar(99, 100, 10) == "[#########.]");  // 9.9 cells round to 10: not yet full
  CHECK(ProgressBar(100, 100, 10) == "[##########]");
  CHECK(ProgressBar(7, 0, 4) == "[####]");  // unknown total counts as full
  CHECK(ProgressBar(200, 100, 4) == "[####]");
}

TEST_CASE("a progress line shows counts, percent, rate and ETA", "[cli][progress]") {
  ProgressSnapshot s;
  s.command = "import";
  s.stage = "configs written";
  s.done = 8800;
  s.total = 20736;
  s.elapsed_s = 2.4;
  s.rate = 4000;  // 11936 left: 2.984 s
  const std::string plain = FormatProgressLine(s, /*bar=*/false);
  CHECK(plain == "import: configs written 8800/20736 (42.4%), 4000/s, 2.4 s elapsed, ETA 3.0 s");
  const std::string bar = FormatProgressLine(s, /*bar=*/true);
  CHECK(bar ==
        "import: configs written [##########..............]  42.4%  8800/20736  4000/s  2.4 s  "
        "ETA 3.0 s");
  // Narrow terminals: a shorter bar, no elapsed time, no rate, then no bar, and the line is cut.
  CHECK(FormatProgressLine(s, true, 84) ==
        "import: configs written [######.......]  42.4%  8800/20736  4000/s  2.4 s  ETA 3.0 s");
  CHECK(FormatProgressLine(s, true, 84).size() == 84);
  CHECK(FormatProgressLine(s, true, 75) ==
        "import: configs written [#####......]  42.4%  8800/20736  4000/s  ETA 3.0 s");
  CHECK(FormatProgressLine(s, true, 66) ==
        "import: configs written [####......]  42.4%  8800/20736  ETA 3.0 s");
  CHECK(FormatProgressLine(s, true, 60) ==
        "import: configs written   42.4%  8800/20736  4000/s  2.4 s  ");
  CHECK(FormatProgressLine(s, true, 60).size() == 60);

  SECTION("no ETA without a rate, and a detail at the end") {
    s.rate = 0;
    s.detail = "3 failed";
    CHECK(FormatProgressLine(s, false) ==
          "import: configs written 8800/20736 (42.4%), 2.4 s elapsed, 3 failed");
  }
  SECTION("an unknown total shows the count and the time only") {
    s.total = 0;
    s.rate = 0;
    CHECK(FormatProgressLine(s, false) == "import: configs written 8800, 2.4 s elapsed");
    s.done = 0;
    CHECK(FormatProgressLine(s, true) == "import: configs written  2.4 s");
  }
  SECTION("almost done never shows 100 %") {
    s.done = 20735;
    CHECK(FormatProgressLine(s, false).find("(99.9%)") != std::string::npos);
  }
}

TEST_CASE("a stage's last line gives the count, the time and the rate", "[cli][progress]") {
  ProgressSnapshot s;
  s.command = "export";
  s.stage = "read find results";
  s.done = 37792;
  s.total = 37792;
  s.elapsed_s = 4.2;
  s.rate = 37792 / 4.2;
  CHECK(FormatStageDone(s) == "export: read find results 37792 in 4.2 s (8998/s)");
  s.total = 40000;
  s.rate = 0;
  CHECK(FormatStageDone(s) == "export: read find results 37792/40000 in 4.2 s");
  s.stage = "configs written";  // nothing to write: the count is still said
  s.done = s.total = 0;
  CHECK(FormatStageDone(s) == "export: configs written 0 in 4.2 s");
}

TEST_CASE("progress modes parse; auto needs a terminal to be a bar", "[cli][progress]") {
  CHECK(*ParseProgressMode("auto") == ProgressMode::kAuto);
  CHECK(*ParseProgressMode("bar") == ProgressMode::kBar);
  CHECK(*ParseProgressMode("plain") == ProgressMode::kPlain);
  CHECK(*ParseProgressMode("off") == ProgressMode::kOff);
  CHECK(!ParseProgressMode("fancy").ok());
  CHECK(StderrProgressOptions(ProgressMode::kPlain).mode == ProgressMode::kPlain);
  CHECK(StderrProgressOptions(ProgressMode::kAuto).mode != ProgressMode::kAuto);
}

TEST_CASE("plain mode: quiet for short stages, then a line every few seconds at most",
          "[cli][progress]") {
  Harness h;
  SECTION("a stage of 3 s prints nothing") {
    {
      Progress p("import", h.Options(ProgressMode::kPlain));
      for (int i = 1; i <= 30; ++i) {
        h.Advance(0.1);
        p.Update("configs written", i * 100, 3000);
      }
      p.Finish();
    }
    CHECK(h.writes.empty());
  }
  SECTION("a stage of 10 min updated 10 times a second prints one line per interval") {
    {
      Progress p("tune", h.Options(ProgressMode::kPlain));
      for (int i = 1; i <= 6000; ++i) {
        h.Advance(0.1);
        p.Update("jobs", i, 6000);
      }
      p.Finish();
    }
    const std::string all = h.All();
    CHECK(all.find('\r') == std::string::npos);
    CHECK(all.find('\x1b') == std::string::npos);
    // 6000 updates; lines at 5, 10, ... s, spaced by a tenth of the stage's age after 50 s.
    CHECK(h.writes.size() >= 15);
    CHECK(h.writes.size() <= 40);
    CHECK(h.writes.front().rfind("tune: jobs 51/6000 (0.8%), 10.0/s, 5.0 s elapsed, ETA", 0) == 0);
    CHECK(h.writes.back() == "tune: jobs 6000 in 10 min 00 s (10.0/s)\n");
    for (const auto& w : h.writes) CHECK(Count(w, "\n") == 1);
  }
  SECTION("a stage of days backs off to one line a minute") {
    Progress p("tune", h.Options(ProgressMode::kPlain));
    p.Update("jobs", 0, 1000000);
    const int hours = 48;
    for (int i = 1; i <= hours * 3600; ++i) {
      h.Advance(1);
      p.Update("jobs", i, 1000000);
    }
    // About 35 lines in the first 10 minutes, then one a minute.
    CHECK(h.writes.size() <= static_cast<size_t>(hours * 60 + 40));
    CHECK(h.writes.size() >= static_cast<size_t>(hours * 60));
  }
}

TEST_CASE("the rate follows the recent pace, not a slow start", "[cli][progress]") {
  Harness h;
  Progress p("jobs load", h.Options(ProgressMode::kPlain));
  p.Update("jobs stored", 0, 1000000);
  h.Advance(20);
  p.Update("jobs stored", 2000, 1000000);  // 100/s for the first 20 s (a slow first statement)
  for (int i = 1; i <= 40; ++i) {           // then 10000/s
    h.Advance(0.25);
    p.Update("jobs stored", 2000 + i * 2500, 1000000);
  }
  REQUIRE(!h.writes.empty());
  // Over the whole stage it would be 3400/s and an ETA of 4 min 44 s.
  CHECK(h.writes.back() ==
        "jobs load: jobs stored 102000/1000000 (10.2%), 10.0k/s, 30 s elapsed, ETA 1 min 30 s\n");
}

TEST_CASE("the ticker's Tick prints a stage that reports nothing for a while",
          "[cli][progress]") {
  Harness h;
  Progress p("export", h.Options(ProgressMode::kPlain));
  p.Update("write find db", 0, 0);
  h.Advance(6);
  p.Tick();
  REQUIRE(h.writes.size() == 1);
  CHECK(h.writes[0] == "export: write find db, 6.0 s elapsed\n");
  h.Advance(1);
  p.Tick();  // not due yet
  CHECK(h.writes.size() == 1);
  p.Update("write find db", 9600, 9600);
  p.Update("read kernels", 0, 3);  // a new stage ends the last one with its line
  REQUIRE(h.writes.size() == 2);
  CHECK(h.writes[1] == "export: write find db 9600 in 7.0 s (1371/s)\n");
}

TEST_CASE("bar mode: one line redrawn in place, replaced by the stage's last line",
          "[cli][progress]") {
  Harness h;
  Progress p("import", h.Options(ProgressMode::kBar, 100));
  p.Update("configs written", 100, 1000);
  CHECK(h.writes.empty());  // shown only once the stage has run for a second
  for (int i = 2; i <= 10; ++i) {
    h.Advance(0.25);
    p.Update("configs written", i * 100, 1000);
  }
  // Updates every 0.25 s; from t = 1 s on (redraws at most every 0.2 s) each one draws.
  REQUIRE(h.writes.size() == 6);
  for (const auto& w : h.writes) {
    CHECK(w.front() == '\r');
    CHECK(w.find('\n') == std::string::npos);
    CHECK(w.size() <= 99 + 5);  // width - 1, plus \r, erase-line and the final \r
    CHECK(w.substr(w.size() - 4) == "\x1b[K\r");
  }
  CHECK(h.writes[0].find("[############............]  50.0%  500/1000") != std::string::npos);
  CHECK(h.writes.back().find("[########################] 100.0%  1000/1000") != std::string::npos);
  p.Note("session 3: gfx942");  // above the bar, then the bar again
  REQUIRE(h.writes.size() == 8);
  CHECK(h.writes[6] == "\rsession 3: gfx942\x1b[K\n");
  CHECK(h.writes[7].find("configs written [") != std::string::npos);
  h.Advance(0.25);
  p.Finish();
  REQUIRE(h.writes.size() == 9);
  CHECK(h.writes[8] == "\rimport: configs written 1000 in 2.5 s (400/s)\x1b[K\n");
  p.Finish();  // nothing left to end
  CHECK(h.writes.size() == 9);
}

TEST_CASE("bar mode: Clear removes the bar without a last line", "[cli][progress]") {
  Harness h;
  Progress p("jobs load", h.Options(ProgressMode::kBar));
  p.Update("jobs stored", 0, 10);
  h.Advance(2);
  p.Update("jobs stored", 5, 10);
  REQUIRE(h.writes.size() == 1);
  p.Clear();
  REQUIRE(h.writes.size() == 2);
  CHECK(h.writes[1] == "\r\x1b[K");
}

TEST_CASE("off mode prints nothing; Seconds counts from construction", "[cli][progress]") {
  Harness h;
  Progress p("import", h.Options(ProgressMode::kOff));
  h.Advance(30);
  p.Update("configs written", 1, 2);
  p.Note("hello");
  p.Tick();
  p.Finish();
  CHECK(h.writes.empty());
  CHECK(p.Seconds() == Approx(30));
}

TEST_CASE("the adapters feed stages by name", "[cli][progress]") {
  Harness h;
  Progress p("applicability", h.Options(ProgressMode::kPlain));
  auto stage = p.StageCallback();
  auto rows = p.CountCallback("rows stored");
  stage("configs checked", 0, 20);
  h.Advance(6);
  stage("configs checked", 10, 20);
  REQUIRE(h.writes.size() == 1);
  CHECK(h.writes[0].rfind("applicability: configs checked 10/20", 0) == 0);
  rows(100, 200);
  REQUIRE(h.writes.size() == 2);
  CHECK(h.writes[1].rfind("applicability: configs checked 10/20 in 6.0 s", 0) == 0);
  h.Advance(6);
  rows(200, 200);
  REQUIRE(h.writes.size() == 3);
  CHECK(h.writes[2].rfind("applicability: rows stored 200/200 (100.0%)", 0) == 0);
}

}  // namespace tuna::cli
