#include "tuner_core/heuristics/features.h"

#include <algorithm>
#include <cmath>

namespace tuna::heuristics {

const std::vector<std::string>& ProblemFeatureNames() {
  static const std::vector<std::string> kNames = {
      "spatial_dims", "n",          "c",          "k",           "in_d",        "in_h",        "in_w",
      "fil_d",        "fil_h",      "fil_w",      "pad_d",       "pad_h",       "pad_w",       "stride_d",
      "stride_h",     "stride_w",   "dilation_d", "dilation_h",  "dilation_w",  "groups",      "mode",
      "direction",    "data_type",  "in_layout",  "fil_layout",  "out_layout",  "out_d",       "out_h",
      "out_w",        "c_per_group", "k_per_group", "log2_flops", "num_cu"};
  return kNames;
}

bool IsCategoricalFeature(const std::string& name) {
  return name == "spatial_dims" || name == "mode" || name == "direction" || name == "data_type" ||
         name.ends_with("_layout");
}

std::vector<float> ProblemFeatures(const Problem& p, const solver::Target& target) {
  const Dhw out = p.Out();
  const auto f = [](auto v) { return static_cast<float>(v); };
  return {f(p.spatial_dims), f(p.n), f(p.c), f(p.k), f(p.in[0]), f(p.in[1]), f(p.in[2]),
          f(p.fil[0]), f(p.fil[1]), f(p.fil[2]), f(p.pad[0]), f(p.pad[1]), f(p.pad[2]),
          f(p.stride[0]), f(p.stride[1]), f(p.stride[2]), f(p.dilation[0]), f(p.dilation[1]),
          f(p.dilation[2]), f(p.groups), f(static_cast<int>(p.mode)), f(static_cast<int>(p.direction)),
          f(static_cast<int>(p.data_type)), f(static_cast<int>(p.in_layout)), f(static_cast<int>(p.fil_layout)),
          f(static_cast<int>(p.out_layout)), f(out[0]), f(out[1]), f(out[2]), f(p.c / std::max<int64_t>(1, p.groups)),
          f(p.k / std::max<int64_t>(1, p.groups)), f(std::log2(std::max(1.0, p.Flops()))), f(target.num_cu)};
}

std::vector<float> ConfigFeatures(const solver::SearchSpace& space, const solver::PerfConfig& config,
                                  const std::vector<std::string>& axes) {
  std::vector<float> out;
  out.reserve(axes.size());
  for (const std::string& a : axes) {
    const int i = space.IndexOf(a);
    out.push_back(i >= 0 && static_cast<size_t>(i) < config.values.size() ? static_cast<float>(config.values[i])
                                                                           : std::nanf(""));
  }
  return out;
}

}  // namespace tuna::heuristics
