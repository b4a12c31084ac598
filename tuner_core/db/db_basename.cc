#include "tuner_core/db/db_basename.h"

#include <charconv>

#include "tuner_core/db/str_util.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tuna::db {

std::string DbBasename(std::string_view arch, uint32_t num_cu) {
  if (num_cu <= 64) return internal::Cat(arch, "_", num_cu);
  return internal::Cat(arch, absl::StrFormat("%x", num_cu));
}

namespace {

absl::StatusOr<DbBasenameParts> Checked(std::string_view basename, std::string arch,
                                        uint32_t num_cu) {
  DbBasenameParts parts{std::move(arch), num_cu};
  if (parts.arch.empty() || DbBasename(parts.arch, parts.num_cu) != basename) {
    return absl::InvalidArgumentError(
        internal::Cat("db basename '", basename, "' is not canonical"));
  }
  return parts;
}

// Length of the arch core ("gfx90a", "sm_90") at the start of `s`, or 0 if unknown.
size_t ArchCoreLength(std::string_view s) {
  if (s.starts_with("gfx")) {
    if (s.size() < 4) return 0;
    return s[3] == '1' ? 7 : 6;
  }
  if (s.starts_with("sm_")) {
    if (s.size() < 4) return 0;
    return s[3] == '1' ? 6 : 5;
  }
  return 0;
}

}  // namespace

absl::StatusOr<DbBasenameParts> ParseDbBasename(std::string_view basename) {
  // Decimal form: the text after the last '_' is all digits.
  if (size_t us = basename.rfind('_'); us != std::string_view::npos && us + 1 < basename.size()) {
    std::string_view digits = basename.substr(us + 1);
    uint32_t cu = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), cu, 10);
    if (ec == std::errc() && p == digits.data() + digits.size() && cu <= 64) {
      return Checked(basename, std::string(basename.substr(0, us)), cu);
    }
  }
  // Hex form.
  size_t core = ArchCoreLength(basename);
  if (core == 0 || core >= basename.size()) {
    return absl::InvalidArgumentError(
        internal::Cat("db basename '", basename, "': cannot split arch from CU count"));
  }
  size_t pos = core;
  for (std::string_view feature : {"_nosramecc", "_sramecc", "_xnack"}) {
    if (basename.substr(pos).starts_with(feature)) pos += feature.size();
  }
  std::string_view hex = basename.substr(pos);
  uint32_t cu = 0;
  auto [p, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), cu, 16);
  if (hex.empty() || ec != std::errc() || p != hex.data() + hex.size() || cu <= 64) {
    return absl::InvalidArgumentError(
        internal::Cat("db basename '", basename, "': no hex CU count > 64 after the arch"));
  }
  return Checked(basename, std::string(basename.substr(0, pos)), cu);
}

}  // namespace tuna::db
