// MIOpen's serialized forms of a problem.
//
// Find-db key: conv::ProblemDescription::Serialize (MIOpen src/conv/problem_description.cpp):
//   C-H-W-FHxFW-K-OH-OW-N-PHxPW-SHxSW-DHxDW-0-LAYOUT-TYPE-DIR[_gG]   (3D adds D first)
// with the "in" tensor = x for F and dy for B/W (so C = forward K, spatial = forward output).
// Perf-db columns: conv::ProblemDescription::Visit (src/include/miopen/conv/problem_description.hpp),
// the 24 columns of the SQLite `config` table.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "tuner_core/problem/problem.h"

namespace tuna {

// Transpose-mode problems are filed as MIOpen does: F as B and B as F with x and y swapped,
// W with x first. Keys do not record the mode, so ParseFindDbKey always returns kConv. Nor do
// they record the pad mode: the output size tells (default, MIOpen's clamp to 1 included, then
// same, then valid; problem.h). INT8 forward keys say INT8INT8INT32 (MIOpen's
// EncodeDataTypesForKey: convint8's y is INT32).
std::string FindDbKey(const Problem& p);
// Inverse of FindDbKey. Groups, layouts, 2D/3D and all three directions. Accepts the keys
// MIOpen prints (no leading zeros, single-token layout only for all-NCHW/NCDHW, no `_g1`, no
// cast suffixes), for which FindDbKey(*ParseFindDbKey(k)) == k byte for byte, and the
// spellings of older MIOpen releases found in its shipped dbs, read as the same problem and
// written in the current form: data type `INT8` for INT8INT8INT32; 3D keys with layout NCHW
// (for NCDHW) or with pads `PHxPW` (pad_d 0).
// InvalidArgument naming the bad field otherwise, also when the stored output size is not
// one the convolution produces in any pad mode.
absl::StatusOr<Problem> ParseFindDbKey(std::string_view key);

// One row of MIOpen's perf-db `config` table (without its id), in table column order.
struct PerfDbConfig {
  std::string layout;     // layout of the "in" tensor
  std::string data_type;  // FP32, FP16, BF16, INT8...
  std::string direction;  // F, B, W
  int64_t spatial_dim = 2;
  int64_t in_channels = 0, in_h = 0, in_w = 0, in_d = 1;
  int64_t fil_h = 0, fil_w = 0, fil_d = 1;
  int64_t out_channels = 0, batchsize = 0;
  int64_t pad_h = 0, pad_w = 0, pad_d = 0;
  int64_t conv_stride_h = 1, conv_stride_w = 1, conv_stride_d = 0;
  int64_t dilation_h = 1, dilation_w = 1, dilation_d = 0;
  int64_t bias = 0;
  int64_t group_count = 1;
  bool operator==(const PerfDbConfig&) const = default;
};

PerfDbConfig ToPerfDbConfig(const Problem& p);
// The perf db does not store the forward input size of B/W problems; it is recovered from
// the output size: exact for stride 1; for stride s > 1 any of s inputs gives that output and
// the LARGEST is chosen, in = o*s + d*(f-1) - 2p, because that is what real networks use
// (e.g. 14x14 -> 7x7 for 1x1 stride 2; 654 of the 668 strided B/W keys in the gfx942130 find
// db, against 13 for the smallest). Layouts of filter/output are taken equal to the "in"
// layout; rows are checked (2D depth columns, bias 0, known names) and the problem validated.
// Always ToPerfDbConfig(*FromPerfDbConfig(c)) == c for an accepted row.
absl::StatusOr<Problem> FromPerfDbConfig(const PerfDbConfig& c);

// The ROCm >= 6.2 text perf-db key (integer columns then strings, joined by 'x').
std::string PerfDbTextKey(const Problem& p);

}  // namespace tuna
