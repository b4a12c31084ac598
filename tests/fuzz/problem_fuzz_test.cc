// Seeded garbage and mutations: nothing crashes or hangs, every rejection says why, and
// whatever is accepted is a valid problem that round-trips.
#include <random>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/problem/test_util.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/problem/keys.h"

namespace tuna {
namespace {

constexpr int kCount = 10000;

std::vector<std::string> Tokens(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ' ') {
      if (!cur.empty()) out.push_back(cur), cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::string Join(const std::vector<std::string>& t) {
  std::string s;
  for (const auto& x : t) s += (s.empty() ? "" : " ") + x;
  return s;
}

// Printable, no spaces/quotes/backslashes: such a token shows verbatim in error messages.
std::string PrintableGarbage(std::mt19937_64& rng) {
  static const std::string kAlpha =
      "abcxyzQWE0123456789-+_.,:;=@#$%^&*()[]{}<>/?!~|xX";
  std::string s;
  const int len = std::uniform_int_distribution<int>(1, 12)(rng);
  for (int i = 0; i < len; ++i) s.push_back(kAlpha[rng() % kAlpha.size()]);
  return s;
}

std::string AnyBytes(std::mt19937_64& rng, int max_len) {
  std::string s;
  const int len = std::uniform_int_distribution<int>(0, max_len)(rng);
  for (int i = 0; i < len; ++i) s.push_back(static_cast<char>(rng() & 0xff));
  return s;
}

void CheckAccepted(const std::vector<Problem>& ps) {
  REQUIRE(!ps.empty());
  REQUIRE(ps.size() <= 3);
  for (const Problem& p : ps) {
    REQUIRE(ValidateProblem(p).ok());
    auto again = ParseDriverLine(ToDriverLine(p));
    REQUIRE(again.ok());
    REQUIRE(again->size() == 1);
    REQUIRE(again->front() == p);
  }
}

TEST_CASE("10k mutated driver lines: rejected with the cause, or valid") {
  std::mt19937_64 rng(1234);
  auto pick = [&rng](int n) { return static_cast<int>(rng() % n); };
  const std::vector<std::string> values = {
      "", "-1", "0", "99999999999999999999", "-9223372036854775808", "9223372036854775807",
      "1e3", "0x10", "+7", "3.5", "NaN", "NHWC", "NCDHW", "trans", "same", "valid", "--",
      "-", "MIOpenDriver", "conv", "#"};
  int rejected = 0, named = 0, garbage_checks = 0;
  for (int i = 0; i < kCount; ++i) {
    std::vector<std::string> t = Tokens(ToDriverLine(testing::RandomValidProblem(rng)));
    std::string token;  // a garbage token the error must quote, if any
    switch (pick(8)) {
      case 0: t.erase(t.begin() + pick(t.size())); break;                    // drop a token
      case 1: t.insert(t.begin() + pick(t.size() + 1), t[pick(t.size())]); break;  // duplicate
      case 2: t[pick(t.size())] = values[pick(values.size())]; break;
      case 3: t.resize(pick(t.size() + 1)); break;                            // truncate
      case 4: {
        token = PrintableGarbage(rng);
        t[pick(t.size())] = token;
        break;
      }
      case 5: t.insert(t.begin() + pick(t.size() + 1), AnyBytes(rng, 8)); break;
      case 6: std::swap(t[pick(t.size())], t[pick(t.size())]); break;
      default: {
        // Out-of-range numbers for a problem flag.
        const char* flags[] = {"-n", "-c", "-k", "-H", "-W", "-y", "-x", "-p", "-u", "-l", "-g"};
        t.push_back(flags[pick(11)]);
        t.push_back(pick(2) ? "-" + std::to_string(rng() % 1000) : std::to_string(rng()));
      }
    }
    const std::string line = Join(t);
    auto r = ParseDriverLine(line);
    INFO(line);
    if (r.ok()) {
      CheckAccepted(*r);
      continue;
    }
    ++rejected;
    REQUIRE(r.status().code() == absl::StatusCode::kInvalidArgument);
    const std::string msg(r.status().message());
    REQUIRE(!msg.empty());
    REQUIRE(msg.size() < 400);
    if (!token.empty() && line.find(token) != std::string::npos) {
      ++garbage_checks;
      // The only change is that token, so it is the cause; it may also have turned the
      // following value into an argument, or an earlier flag's value (then the flag is named).
      const bool quoted = msg.find(token.substr(0, 64)) != std::string::npos;
      const bool flag_named = msg.find("flag") != std::string::npos ||
                              msg.find("missing") != std::string::npos ||
                              msg.find("argument") != std::string::npos;
      named += quoted || flag_named;
      REQUIRE((quoted || flag_named));
    }
  }
  CHECK(rejected > kCount / 2);
  CHECK(garbage_checks > 500);
  CHECK(named == garbage_checks);
}

TEST_CASE("10k random byte strings and token soups never crash and are rejected") {
  std::mt19937_64 rng(42);
  static const char* kSoup[] = {"conv", "convfp16", "-n", "-F", "--spatial_dim", "3", "-_",
                                "-m", "trans", "-g", "0", "-1", "MIOpenDriver", "Command",
                                "[LogCmdConvolution]", "-z", "same", "--in_layout", "NDHWC", "#"};
  for (int i = 0; i < kCount; ++i) {
    std::string line;
    if (i % 2 == 0) {
      line = AnyBytes(rng, 120);
    } else {
      const int n = 1 + rng() % 20;
      for (int j = 0; j < n; ++j) line += std::string(kSoup[rng() % 20]) + " ";
    }
    auto r = ParseDriverLine(line);
    if (r.ok()) {
      CheckAccepted(*r);
    } else {
      REQUIRE(!r.status().message().empty());
    }
  }
  // Whole files of garbage: every non-comment line is either parsed or reported.
  for (int i = 0; i < 200; ++i) {
    const std::string text = AnyBytes(rng, 2000);
    const DriverFile f = ParseDriverText(text);
    for (const auto& e : f.errors) {
      REQUIRE(e.line_number >= 1);
      REQUIRE(!e.reason.empty());
    }
  }
}

TEST_CASE("10k mutated find-db keys: byte-identical when accepted, reasoned when not") {
  std::mt19937_64 rng(77);
  int accepted = 0;
  for (int i = 0; i < kCount; ++i) {
    std::string key = FindDbKey(testing::RandomValidProblem(rng, false));
    switch (rng() % 5) {
      case 0: key[rng() % key.size()] = "0123456789x-_gNCHWFPB"[rng() % 21]; break;
      case 1: key.erase(rng() % key.size(), 1 + rng() % 3); break;
      case 2: key.insert(rng() % (key.size() + 1), 1, static_cast<char>(rng() & 0xff)); break;
      case 3: key = AnyBytes(rng, 80); break;
      default: break;  // unchanged
    }
    auto r = ParseFindDbKey(key);
    if (r.ok()) {
      ++accepted;
      if (FindDbKey(*r) != key) {
        // Only an older spelling (keys.h) may come back changed: a 3D key saying NCHW/NHWC,
        // or INT8 for INT8INT8INT32; its current form is the same problem.
        INFO(key << " -> " << FindDbKey(*r));
        REQUIRE((key.find("-NCHW-") != std::string::npos ||
                 key.find("-NHWC-") != std::string::npos || key.find("-INT8-") != std::string::npos));
        auto again = ParseFindDbKey(FindDbKey(*r));
        REQUIRE(again.ok());
        REQUIRE(*again == *r);
      }
      REQUIRE(ValidateProblem(*r).ok());
    } else {
      REQUIRE(!r.status().message().empty());
    }
  }
  CHECK(accepted > kCount / 5);
}

TEST_CASE("10k random perf-db rows: no crash, accepted rows round-trip") {
  std::mt19937_64 rng(3);
  const int64_t extremes[] = {0, 1, 2, 3, -1, 7, 64, 1 << 20, (int64_t{1} << 20) + 1,
                              INT64_MAX, INT64_MIN};
  auto val = [&] {
    return rng() % 3 == 0 ? extremes[rng() % 11] : static_cast<int64_t>(1 + rng() % 64);
  };
  int accepted = 0;
  for (int i = 0; i < kCount; ++i) {
    PerfDbConfig c;
    const char* layouts[] = {"NCHW", "NHWC", "NCDHW", "NDHWC", "CHWN", ""};
    const char* types[] = {"FP32", "FP16", "BF16", "INT8", "FP8"};
    const char* dirs[] = {"F", "B", "W", "X"};
    c.layout = layouts[rng() % 6];
    c.data_type = types[rng() % 5];
    c.direction = dirs[rng() % 4];
    c.spatial_dim = rng() % 4 == 0 ? 3 : 2;
    for (int64_t* f : {&c.in_channels, &c.in_h, &c.in_w, &c.fil_h, &c.fil_w, &c.out_channels,
                       &c.batchsize, &c.pad_h, &c.pad_w, &c.conv_stride_h, &c.conv_stride_w,
                       &c.dilation_h, &c.dilation_w, &c.group_count})
      *f = val();
    c.pad_h %= 4, c.pad_w %= 4;
    if (rng() % 4 != 0) c.group_count = 1;
    if (rng() % 2 == 0) c.layout = c.spatial_dim == 3 ? "NCDHW" : "NCHW";
    if (c.spatial_dim == 3 || rng() % 8 == 0) {
      c.in_d = val(), c.fil_d = val(), c.pad_d = val() % 3, c.conv_stride_d = val();
      c.dilation_d = val();
    }
    auto p = FromPerfDbConfig(c);
    if (p.ok()) {
      ++accepted;
      // Older spellings come back in today's form (keys.h): INT8 forward rows as
      // INT8INT8INT32, 3D rows saying NCHW / NHWC as NCDHW / NDHWC.
      PerfDbConfig want = c;
      if (want.data_type == "INT8" && want.direction == "F") want.data_type = "INT8INT8INT32";
      if (want.spatial_dim == 3 && want.layout == "NCHW") want.layout = "NCDHW";
      if (want.spatial_dim == 3 && want.layout == "NHWC") want.layout = "NDHWC";
      // ... and the negative dy sizes of older unclamped B/W rows as MIOpen's 1.
      for (int64_t* v : {&want.in_h, &want.in_w, &want.in_d}) {
        if (want.direction != "F" && *v <= 0) *v = 1;
      }
      REQUIRE(ToPerfDbConfig(*p) == want);
    } else {
      REQUIRE(!p.status().message().empty());
    }
  }
  CHECK(accepted > 50);
}

}  // namespace
}  // namespace tuna
