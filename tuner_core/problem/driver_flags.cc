#include "tuner_core/problem/driver_flags.h"

namespace tuna::driver_flags {
namespace {

// MIOpen driver/conv_driver.hpp AddCmdLineArgs, in its order.
constexpr FlagInfo kFlags[] = {
    {"in_layout", 'I', Field::kInLayout},
    {"out_layout", 'O', Field::kOutLayout},
    {"fil_layout", 'f', Field::kFilLayout},
    {"spatial_dim", '_', Field::kSpatialDim},
    {"forw", 'F', Field::kForw},
    {"batchsize", 'n', Field::kBatch},
    {"in_channels", 'c', Field::kInC},
    {"in_d", '!', Field::kInD},
    {"in_h", 'H', Field::kInH},
    {"in_w", 'W', Field::kInW},
    {"out_channels", 'k', Field::kOutC},
    {"fil_d", '@', Field::kFilD},
    {"fil_h", 'y', Field::kFilH},
    {"fil_w", 'x', Field::kFilW},
    {"conv_stride_d", '#', Field::kStrideD},
    {"conv_stride_h", 'u', Field::kStrideH},
    {"conv_stride_w", 'v', Field::kStrideW},
    {"pad_d", '$', Field::kPadD},
    {"pad_h", 'p', Field::kPadH},
    {"pad_w", 'q', Field::kPadW},
    {"pad_val", 'r', Field::kIgnored},
    {"trans_output_pad_d", '%', Field::kTransPadD},
    {"trans_output_pad_h", 'Y', Field::kTransPadH},
    {"trans_output_pad_w", 'X', Field::kTransPadW},
    {"iter", 'i', Field::kIgnored},
    {"verify", 'V', Field::kIgnored},
    {"verification_cache", 'C', Field::kIgnored},
    {"time", 't', Field::kIgnored},
    {"wall", 'w', Field::kIgnored},
    {"search", 's', Field::kIgnored},
    {"printconv", 'P', Field::kIgnored},
    {"dump_output", 'o', Field::kIgnored},
    {"in_data", 'd', Field::kIgnored},
    {"weights", 'e', Field::kIgnored},
    {"bias", 'b', Field::kIgnored},
    {"mode", 'm', Field::kMode},
    {"pad_mode", 'z', Field::kPadMode},
    {"tensor_vect", 'Z', Field::kIgnored},
    {"vector_length", 'L', Field::kIgnored},
    {"dilation_d", '^', Field::kDilD},
    {"dilation_h", 'l', Field::kDilH},
    {"dilation_w", 'j', Field::kDilW},
    {"in_bias", 'a', Field::kIgnored},
    {"group_count", 'g', Field::kGroups},
    {"dout_data", 'D', Field::kIgnored},
    {"solution", 'S', Field::kIgnored},
    {"gpualloc", 'G', Field::kIgnored},
    {"in_cast_type", 'U', Field::kIgnored},
    {"out_cast_type", 'T', Field::kIgnored},
    {"wei_cast_type", 'R', Field::kIgnored},
};

}  // namespace

std::optional<FlagInfo> FindFlag(std::string_view token) {
  if (token.size() > 2 && token[0] == '-' && token[1] == '-') {
    const std::string_view name = token.substr(2);
    for (const FlagInfo& f : kFlags)
      if (f.long_name == name) return f;
    return std::nullopt;
  }
  if (token.size() == 2 && token[0] == '-') {
    for (const FlagInfo& f : kFlags)
      if (f.short_name == token[1]) return f;
  }
  return std::nullopt;
}

}  // namespace tuna::driver_flags
