#include "tuner_core/runtime/find_controls.h"

#include <cstdlib>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tuner_core/problem/named_values.h"

namespace tuna::runtime {
namespace {

std::string Upper(std::string_view s) { return absl::AsciiStrToUpper(std::string(s)); }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && absl::ascii_isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && absl::ascii_isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

absl::StatusOr<bool> ParseBool(const char* var, std::string_view text) {
  const std::string t = Upper(text);
  if (t == "1" || t == "ON" || t == "YES" || t == "TRUE" || t == "ENABLE" || t == "ENABLED") return true;
  if (t == "0" || t == "OFF" || t == "NO" || t == "FALSE" || t == "DISABLE" || t == "DISABLED" || t.empty()) {
    return false;
  }
  return absl::InvalidArgumentError(absl::StrCat(var, "='", std::string(text), "' is not a boolean"));
}

// The names MIOpen gives each value; a value's number is its enum value (MIOpen's numbers).
constexpr NamedValue<FindMode> kFindModeNames[] = {
    {FindMode::kNormal, "NORMAL"}, {FindMode::kFast, "FAST"}, {FindMode::kHybrid, "HYBRID"},
    {FindMode::kDynamicHybrid, "DYNAMIC_HYBRID"}};
constexpr NamedValue<FindEnforce> kFindEnforceNames[] = {
    {FindEnforce::kNone, "NONE"}, {FindEnforce::kDbUpdate, "DB_UPDATE"}, {FindEnforce::kSearch, "SEARCH"},
    {FindEnforce::kSearchDbUpdate, "SEARCH_DB_UPDATE"}, {FindEnforce::kDbClean, "DB_CLEAN"}};

// The value an upper-cased, trimmed setting names, by its name or its number.
template <typename E, size_t N>
std::optional<E> ValueOfSetting(const NamedValue<E> (&table)[N], const std::string& t) {
  for (const NamedValue<E>& e : table) {
    if (t == e.name || t == std::to_string(static_cast<int>(e.value))) return e.value;
  }
  return std::nullopt;
}

// "NAME(number), ..." for an error message; the last separator is `last`.
template <typename E, size_t N>
std::string Choices(const NamedValue<E> (&table)[N], std::string_view last = ", ") {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    out.append(i == 0 ? "" : (i + 1 == N ? last : ", ")).append(table[i].name);
    out.append("(" + std::to_string(static_cast<int>(table[i].value)) + ")");
  }
  return out;
}

}  // namespace

absl::StatusOr<FindMode> ParseFindMode(std::string_view text) {
  const std::string t = Upper(Trim(text));
  if (std::optional<FindMode> mode = ValueOfSetting(kFindModeNames, t)) return *mode;
  if (t == "4" || t == "DEPRECATEDFASTHYBRID" || t == "FAST_HYBRID") {
    return absl::InvalidArgumentError(absl::StrCat(
        "MIOPEN_FIND_MODE=4 is a reserved value (MIOpen's deprecated FAST_HYBRID) and is not supported; use ",
        Choices(kFindModeNames, " or ")));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("MIOPEN_FIND_MODE='", std::string(text), "' is not one of ", Choices(kFindModeNames)));
}

absl::StatusOr<FindEnforce> ParseFindEnforce(std::string_view text) {
  const std::string t = Upper(Trim(text));
  if (std::optional<FindEnforce> value = ValueOfSetting(kFindEnforceNames, t)) return *value;
  if (t == "CLEAN") return FindEnforce::kDbClean;
  return absl::InvalidArgumentError(
      absl::StrCat("MIOPEN_FIND_ENFORCE='", std::string(text), "' is not one of ", Choices(kFindEnforceNames)));
}

std::string_view FindModeName(FindMode mode) { return NameIn(kFindModeNames, mode); }
std::string_view FindEnforceName(FindEnforce value) { return NameIn(kFindEnforceNames, value); }

FindMode EffectiveFindMode(FindMode mode, FindEnforce enforce) {
  return enforce == FindEnforce::kNone ? mode : FindMode::kNormal;
}

std::string ExpandHome(std::string_view path, const EnvLookup& lookup) {
  std::string home;
  if (const char* h = lookup("HOME"); h != nullptr) home = h;
  if (home.empty() || home == "/") home = std::filesystem::temp_directory_path().string();
  std::string p(path);
  if (p == "~" || p.starts_with("~/")) return home + p.substr(1);
  if (p == "$HOME" || p.starts_with("$HOME/")) return home + p.substr(5);
  return p;
}

absl::StatusOr<RuntimeConfig> FromEnvironmentLookup(const EnvLookup& lookup) {
  RuntimeConfig c;
  if (const char* v = lookup("MIOPEN_FIND_MODE"); v != nullptr && *v != '\0') {
    absl::StatusOr<FindMode> m = ParseFindMode(v);
    if (!m.ok()) return m.status();
    c.find_mode = *m;
  }
  if (const char* v = lookup("MIOPEN_FIND_ENFORCE"); v != nullptr && *v != '\0') {
    absl::StatusOr<FindEnforce> e = ParseFindEnforce(v);
    if (!e.ok()) return e.status();
    c.find_enforce = *e;
  }
  if (const char* v = lookup("MIOPEN_USER_DB_PATH"); v != nullptr) {
    c.user_db_dir = *v == '\0' ? "" : ExpandHome(v, lookup);
  } else {
    c.user_db_dir = ExpandHome("~/.config/miopen", lookup);
  }
  if (const char* v = lookup("MIOPEN_SYSTEM_DB_PATH"); v != nullptr) c.system_db_dir = ExpandHome(v, lookup);
  if (const char* v = lookup("MIOPEN_CUSTOM_CACHE_DIR"); v != nullptr && *v != '\0') {
    c.kernel_cache_dir = ExpandHome(v, lookup);
  } else {
    c.kernel_cache_dir = ExpandHome("~/.cache/tuna/kernels", lookup);
  }
  struct BoolVar {
    const char* name;
    bool* out;
    bool invert;
  };
  bool fallback_on = true;
  for (const BoolVar& b : {BoolVar{"MIOPEN_DISABLE_CACHE", &c.disable_kernel_cache, false},
                           BoolVar{"MIOPEN_ENABLE_LOGGING_CMD", &c.logging_cmd, false},
                           BoolVar{"MIOPEN_DEBUG_DISABLE_FIND_DB", &c.disable_find_db, false},
                           BoolVar{"MIOPEN_DEBUG_CONV_IMMED_FALLBACK", &fallback_on, false}}) {
    const char* v = lookup(b.name);
    if (v == nullptr) continue;
    absl::StatusOr<bool> parsed = ParseBool(b.name, v);
    if (!parsed.ok()) return parsed.status();
    *b.out = *parsed;
  }
  c.disable_fallback = !fallback_on;
  if (const char* v = lookup("MIOPEN_DEVICE_CU"); v != nullptr && *v != '\0') {
    if (!absl::SimpleAtoi(v, &c.device_cu) || c.device_cu < 0) {
      return absl::InvalidArgumentError(absl::StrCat("MIOPEN_DEVICE_CU='", v, "' is not a count"));
    }
  }
  if (const char* v = lookup("MIOPEN_DEBUG_TUNING_ITERATIONS_MAX"); v != nullptr && *v != '\0') {
    if (!absl::SimpleAtoi(v, &c.search_budget)) {
      return absl::InvalidArgumentError(
          absl::StrCat("MIOPEN_DEBUG_TUNING_ITERATIONS_MAX='", v, "' is not a count"));
    }
  }
  if (const char* v = lookup("TUNA_BACKEND"); v != nullptr) c.backend = v;
  return c;
}

absl::StatusOr<RuntimeConfig> FromEnvironment() {
  return FromEnvironmentLookup([](const char* name) { return std::getenv(name); });
}

}  // namespace tuna::runtime
