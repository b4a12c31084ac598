// Private to tuner_core/problem: the MIOpenDriver `conv` flag table.
//
// Source: MIOpen driver/conv_driver.hpp (ConvDriver::AddCmdLineArgs), summarised in
// /work/shared/research/MIOPEN_DB_FORMATS.md §6. Every flag takes exactly one value.
#pragma once

#include <optional>
#include <string_view>

namespace tuna::driver_flags {

// The flags that shape the problem; every other known flag is accepted and ignored.
enum class Field {
  kIgnored,
  kInLayout,
  kOutLayout,
  kFilLayout,
  kSpatialDim,
  kForw,
  kBatch,
  kInC,
  kInD,
  kInH,
  kInW,
  kOutC,
  kFilD,
  kFilH,
  kFilW,
  kStrideD,
  kStrideH,
  kStrideW,
  kPadD,
  kPadH,
  kPadW,
  kTransPadD,
  kTransPadH,
  kTransPadW,
  kDilD,
  kDilH,
  kDilW,
  kGroups,
  kMode,
  kPadMode,
  kCount,
};

struct FlagInfo {
  std::string_view long_name;  // without the leading "--"
  char short_name;             // without the leading "-"
  Field field;
};

// Looks a flag token up ("--in_h" or "-H"); nullopt for unknown flags.
std::optional<FlagInfo> FindFlag(std::string_view token);

}  // namespace tuna::driver_flags
