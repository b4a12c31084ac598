#include "tuner_core/solver/perf_config.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace tuna::solver {

std::string PerfConfig::ToString() const { return absl::StrJoin(values, ","); }

uint64_t SearchSpace::Size() const {
  if (axes_.empty()) return 0;
  uint64_t n = 1;
  for (const ParamAxis& a : axes_) {
    if (a.values.empty()) return 0;
    if (!a.searched) continue;
    if (n > std::numeric_limits<uint64_t>::max() / a.values.size()) {
      return std::numeric_limits<uint64_t>::max();
    }
    n *= a.values.size();
  }
  return n;
}

PerfConfig SearchSpace::At(uint64_t index) const {
  PerfConfig config;
  config.values.resize(axes_.size());
  for (size_t i = axes_.size(); i-- > 0;) {
    const auto& domain = axes_[i].values;
    if (!axes_[i].searched) {
      config.values[i] = domain.front();
      continue;
    }
    config.values[i] = domain[index % domain.size()];
    index /= domain.size();
  }
  return config;
}

std::optional<uint64_t> SearchSpace::Index(const PerfConfig& config) const {
  if (config.values.size() != axes_.size()) return std::nullopt;
  uint64_t index = 0;
  for (size_t a = 0; a < axes_.size(); ++a) {
    const auto& values = axes_[a].values;
    auto it = std::find(values.begin(), values.end(), config.values[a]);
    if (it == values.end()) return std::nullopt;
    if (!axes_[a].searched) continue;
    index = index * values.size() + static_cast<uint64_t>(it - values.begin());
  }
  return index;
}

PerfConfig SearchSpace::Searched(PerfConfig config) const {
  for (size_t i = 0; i < axes_.size() && i < config.values.size(); ++i) {
    if (!axes_[i].searched) config.values[i] = axes_[i].values.front();
  }
  return config;
}

bool SearchSpace::Contains(const PerfConfig& config) const {
  if (config.values.size() != axes_.size()) return false;
  for (size_t i = 0; i < axes_.size(); ++i) {
    const auto& domain = axes_[i].values;
    if (std::find(domain.begin(), domain.end(), config.values[i]) == domain.end()) return false;
  }
  return true;
}

absl::StatusOr<PerfConfig> SearchSpace::Parse(std::string_view params) const {
  std::vector<std::string> fields;
  if (!params.empty()) fields = absl::StrSplit(std::string(params), ',');
  size_t required = axes_.size();
  while (required > 0 && axes_[required - 1].absent.has_value()) --required;
  if (fields.size() < required || fields.size() > axes_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("params '", std::string(params), "': expected ",
                                                   required == axes_.size() ? "" : absl::StrCat(required, " to "),
                                                   axes_.size(), " values, got ", fields.size()));
  }
  PerfConfig config;
  for (size_t i = 0; i < fields.size(); ++i) {
    int64_t v = 0;
    const char* end = fields[i].data() + fields[i].size();
    auto [ptr, ec] = std::from_chars(fields[i].data(), end, v);
    if (ec != std::errc() || ptr != end) {
      return absl::InvalidArgumentError(absl::StrCat("params '", std::string(params), "': ", axes_[i].name,
                                                     " is not an integer: '", fields[i], "'"));
    }
    const auto& domain = axes_[i].values;
    if (std::find(domain.begin(), domain.end(), v) == domain.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("params '", std::string(params), "': ", axes_[i].name, "=", v, " is outside {",
                       absl::StrJoin(domain, ","), "}"));
    }
    config.values.push_back(v);
  }
  for (size_t i = fields.size(); i < axes_.size(); ++i) config.values.push_back(*axes_[i].absent);
  return config;
}

int SearchSpace::IndexOf(std::string_view axis) const {
  for (size_t i = 0; i < axes_.size(); ++i) {
    if (axes_[i].name == axis) return static_cast<int>(i);
  }
  return -1;
}

std::string SearchSpace::AxisNames() const {
  std::vector<std::string> names;
  for (const ParamAxis& a : axes_) names.push_back(a.name);
  return absl::StrJoin(names, ",");
}

absl::StatusOr<int64_t> SearchSpace::Find(const PerfConfig& config, std::string_view axis) const {
  const int i = IndexOf(axis);
  if (i < 0) {
    return absl::InvalidArgumentError(absl::StrCat("no axis '", std::string(axis), "' in {", AxisNames(), "}"));
  }
  if (static_cast<size_t>(i) >= config.values.size()) {
    return absl::InvalidArgumentError(absl::StrCat("params '", config.ToString(), "' have no value for axis ",
                                                   std::string(axis), " (position ", i, ")"));
  }
  return config.values[i];
}

int64_t SearchSpace::Value(const PerfConfig& config, std::string_view axis) const {
  absl::StatusOr<int64_t> v = Find(config, axis);
  if (!v.ok()) {
    std::fprintf(stderr, "SearchSpace::Value: %s\n", std::string(v.status().message()).c_str());
    std::abort();
  }
  return *v;
}

absl::StatusOr<PerfConfig> SearchSpace::TryMake(const NamedValues& named) const {
  PerfConfig config;
  config.values.assign(axes_.size(), 0);
  std::vector<bool> seen(axes_.size(), false);
  for (const auto& [name, value] : named) {
    const int i = IndexOf(name);
    if (i < 0) return absl::InvalidArgumentError(absl::StrCat("no axis '", std::string(name), "' in {", AxisNames(), "}"));
    if (seen[i]) return absl::InvalidArgumentError(absl::StrCat("axis ", std::string(name), " given twice"));
    const auto& domain = axes_[i].values;
    if (std::find(domain.begin(), domain.end(), value) == domain.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(name), "=", value, " is outside {", absl::StrJoin(domain, ","), "}"));
    }
    seen[i] = true;
    config.values[i] = value;
  }
  for (size_t i = 0; i < axes_.size(); ++i) {
    if (seen[i]) continue;
    if (!axes_[i].searched) {
      config.values[i] = axes_[i].values.front();
      continue;
    }
    return absl::InvalidArgumentError(absl::StrCat("axis ", axes_[i].name, " not given"));
  }
  return config;
}

PerfConfig SearchSpace::Make(const NamedValues& named) const {
  absl::StatusOr<PerfConfig> config = TryMake(named);
  if (!config.ok()) {
    std::fprintf(stderr, "SearchSpace::Make: %s\n", std::string(config.status().message()).c_str());
    std::abort();
  }
  return *std::move(config);
}

std::vector<std::string> SearchSpace::Defines(const PerfConfig& config) const {
  std::vector<std::string> defines;
  for (size_t i = 0; i < axes_.size() && i < config.values.size(); ++i) {
    if (axes_[i].use != AxisUse::kDefine) continue;
    defines.push_back(absl::StrCat("-D", axes_[i].name, "=", config.values[i]));
  }
  return defines;
}

std::string SearchSpace::Describe(const PerfConfig& config) const {
  std::vector<std::string> parts;
  for (size_t i = 0; i < axes_.size() && i < config.values.size(); ++i) {
    parts.push_back(absl::StrCat(axes_[i].name, "=", config.values[i]));
  }
  return absl::StrJoin(parts, " ");
}

std::vector<int64_t> Pow2Range(int64_t lo, int64_t hi) {
  std::vector<int64_t> v;
  for (int64_t x = lo; x <= hi; x *= 2) v.push_back(x);
  return v;
}

std::vector<int64_t> LinearRange(int64_t lo, int64_t hi, int64_t step) {
  std::vector<int64_t> v;
  for (int64_t x = lo; x <= hi; x += step) v.push_back(x);
  return v;
}

}  // namespace tuna::solver
