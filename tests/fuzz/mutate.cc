#include "tests/fuzz/mutate.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace tuna::fuzz {

const char* MutationName(Mutation m) {
  switch (m) {
    case Mutation::kNone: return "none";
    case Mutation::kTruncate: return "truncate";
    case Mutation::kFlipBits: return "flip bits";
    case Mutation::kHugeNumber: return "huge number";
    case Mutation::kNegativeNumber: return "negative number";
    case Mutation::kEmptyField: return "empty field";
    case Mutation::kControlByte: return "control byte";
    case Mutation::kLongLine: return "long line";
    case Mutation::kDeleteBytes: return "delete bytes";
    case Mutation::kSwapFields: return "swap fields";
  }
  return "?";
}

Mutator::Mutator(uint64_t seed, std::string separators)
    : rng_(seed), separators_(std::move(separators)) {}

std::string Mutator::Mutate(std::string_view valid) {
  return Mutate(valid, static_cast<Mutation>(Below(kMutationKinds)));
}

std::string Mutator::Number(bool huge) {
  static const char* kHuge[] = {"99999999999999999999", "18446744073709551615",
                                "18446744073709551616", "9223372036854775807",
                                "9223372036854775808", "4294967296", "2147483648",
                                "1e308", "1e39", "3.5e38", "inf", "nan",
                                "123456789012345678901234567890123456789012345678901234567890"};
  static const char* kNegative[] = {"-1", "-0", "-2", "-9223372036854775808",
                                    "-9223372036854775809", "-2147483649", "-1e308", "-inf",
                                    "-0.5", "-99999999999999999999"};
  if (huge) return kHuge[Below(std::size(kHuge))];
  return kNegative[Below(std::size(kNegative))];
}

// Replaces one run of digits (or, if there is none, a random position) by an edge number.
std::string Mutator::ReplaceNumber(std::string s, bool huge) {
  std::vector<std::pair<size_t, size_t>> runs;  // [begin, end)
  for (size_t i = 0; i < s.size();) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    runs.emplace_back(i, j);
    i = j;
  }
  const std::string n = Number(huge);
  if (runs.empty()) return s.insert(Below(s.size() + 1), n);
  const auto [b, e] = runs[Below(runs.size())];
  return s.replace(b, e - b, n);
}

std::vector<size_t> Mutator::SeparatorPositions(const std::string& s) const {
  std::vector<size_t> pos;
  for (size_t i = 0; i < s.size(); ++i) {
    if (separators_.find(s[i]) != std::string::npos) pos.push_back(i);
  }
  return pos;
}

std::string Mutator::EmptyField(std::string s) {
  const std::vector<size_t> pos = SeparatorPositions(s);
  if (pos.empty()) return std::string();
  const size_t k = Below(pos.size());
  if (k + 1 < pos.size() && Below(4) != 0) {
    return s.erase(pos[k] + 1, pos[k + 1] - pos[k] - 1);  // "a;b;c" -> "a;;c"
  }
  if (Below(2) == 0) return s.erase(0, pos[k]);  // the leading field: "a;b" -> ";b"
  return s.insert(pos[k], 1, s[pos[k]]);         // a doubled separator
}

std::string Mutator::SwapFields(std::string s) {
  const std::vector<size_t> pos = SeparatorPositions(s);
  if (pos.size() < 3) return s;
  const size_t a = Below(pos.size() - 1), b = Below(pos.size() - 1);
  if (a == b) return s;
  const size_t lo = std::min(a, b), hi = std::max(a, b);
  const std::string f1 = s.substr(pos[lo] + 1, pos[lo + 1] - pos[lo] - 1);
  const std::string f2 = s.substr(pos[hi] + 1, pos[hi + 1] - pos[hi] - 1);
  s.replace(pos[hi] + 1, f2.size(), f1);  // the later one first: positions before stay valid
  s.replace(pos[lo] + 1, f1.size(), f2);
  return s;
}

std::string Mutator::Mutate(std::string_view valid, Mutation kind) {
  last_ = kind;
  std::string s(valid);
  switch (kind) {
    case Mutation::kNone:
      return s;
    case Mutation::kTruncate:
      return s.substr(0, Below(s.size() + 1));
    case Mutation::kFlipBits: {
      if (s.empty()) return std::string(1, static_cast<char>(1 + Below(255)));
      const uint64_t n = 1 + Below(4);
      for (uint64_t i = 0; i < n; ++i) s[Below(s.size())] ^= static_cast<char>(1 + Below(255));
      return s;
    }
    case Mutation::kHugeNumber:
      return ReplaceNumber(std::move(s), true);
    case Mutation::kNegativeNumber:
      return ReplaceNumber(std::move(s), false);
    case Mutation::kEmptyField:
      return EmptyField(std::move(s));
    case Mutation::kControlByte: {
      static const char kControl[] = {'\0', '\r', '\n', '\t', '\x1b', '\x7f', '\x01', '\x08',
                                      '\x0b', '\x0c', '\xff', '\xc3', '\x80'};
      return s.insert(Below(s.size() + 1), 1, kControl[Below(std::size(kControl))]);
    }
    case Mutation::kLongLine: {
      const size_t at = Below(s.size() + 1);
      if (Below(2) == 0 || s.empty()) {
        const size_t len = (size_t{64} << 10) + Below(size_t{256} << 10);
        static const char kFill[] = {'9', 'x', 'a', ' ', ',', '-', '0'};
        return s.insert(at, len, kFill[Below(std::size(kFill))]);
      }
      const std::string piece = s.substr(Below(s.size()), 1 + Below(16));
      std::string run;
      while (run.size() < (size_t{64} << 10)) run += piece;
      return s.insert(at, run);
    }
    case Mutation::kDeleteBytes: {
      if (s.empty()) return s;
      const size_t at = Below(s.size());
      return s.erase(at, 1 + Below(8));
    }
    case Mutation::kSwapFields:
      return SwapFields(std::move(s));
  }
  return s;
}

}  // namespace tuna::fuzz
