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

std::string FindDbKey(const Problem& p);
// Inverse of FindDbKey. Groups, layouts, 2D/3D and all three directions.
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
// the output size (stride 1 exactly; otherwise the smallest input giving that output).
// Layouts of filter/output are taken equal to the "in" layout.
absl::StatusOr<Problem> FromPerfDbConfig(const PerfDbConfig& c);

// The ROCm >= 6.2 text perf-db key (integer columns then strings, joined by 'x').
std::string PerfDbTextKey(const Problem& p);

}  // namespace tuna
