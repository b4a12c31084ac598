// Seeded mutations of valid inputs for the fuzz tests (tests/fuzz/): each Mutate call applies one
// kind of damage to a copy of a valid input. The same seed gives the same sequence of outputs on
// every machine (std::mt19937_64 is fully specified; no std::*_distribution is used, since
// their algorithms are implementation-defined). Not thread-safe: one Mutator per thread.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace tuna::fuzz {

enum class Mutation {
  kNone,            // unchanged (the valid input itself)
  kTruncate,        // cut at a random byte
  kFlipBits,        // 1-4 bytes xor'ed with a random non-zero value
  kHugeNumber,      // a run of digits replaced by an out-of-range number (20+ digits, 2^63, 1e308, inf)
  kNegativeNumber,  // a run of digits replaced by a negative one (-1, -0, INT64_MIN, ...)
  kEmptyField,      // the text between two separators removed (or one separator doubled)
  kControlByte,     // a control byte inserted: NUL, \r, \n, \t, ESC, DEL, 0xff, ...
  kLongLine,        // a 64-320 KiB run of one byte, or a field repeated to 64 KiB, inserted
  kDeleteBytes,     // 1-8 bytes removed
  kSwapFields,      // two separator-delimited fields exchanged
};
constexpr int kMutationKinds = 10;

const char* MutationName(Mutation m);

class Mutator {
 public:
  // `separators`: the bytes that delimit fields in the inputs (e.g. "x-" for keys, ";:,=" for db
  // records, " " for driver lines); kEmptyField and kSwapFields work on them.
  Mutator(uint64_t seed, std::string separators);

  // A mutated copy of `valid` (a random kind).
  std::string Mutate(std::string_view valid);
  std::string Mutate(std::string_view valid, Mutation kind);
  Mutation last() const { return last_; }

  // The generator, for tests that draw their own choices. Uniform in [0, n) (n > 0).
  uint64_t Below(uint64_t n) { return rng_() % n; }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::string Number(bool huge);
  std::string ReplaceNumber(std::string s, bool huge);
  std::string EmptyField(std::string s);
  std::string SwapFields(std::string s);
  std::vector<size_t> SeparatorPositions(const std::string& s) const;

  std::mt19937_64 rng_;
  std::string separators_;
  Mutation last_ = Mutation::kNone;
};

}  // namespace tuna::fuzz
