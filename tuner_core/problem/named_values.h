// Names of enum values kept as one table per enum, so that printing, parsing and the list
// of choices in an error message read the same entries instead of each re-typing them.
// Header-only, constexpr, no state: thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

namespace tuna {

template <typename E>
struct NamedValue {
  E value;
  std::string_view name;
};

// The name of `value` in `table`, or `unknown` when the table has no entry for it.
template <typename E, size_t N>
constexpr std::string_view NameIn(const NamedValue<E> (&table)[N], E value, std::string_view unknown = "?") {
  for (const NamedValue<E>& e : table) {
    if (e.value == value) return e.name;
  }
  return unknown;
}

}  // namespace tuna
