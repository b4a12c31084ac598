#include "schema/store/rows.h"

#include <stdexcept>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tuna::schema {

int Row::Index(std::string_view column) const {
  for (size_t i = 0; i < columns_->size(); ++i) {
    if ((*columns_)[i] == column) return static_cast<int>(i);
  }
  return -1;
}

size_t Row::Checked(std::string_view column) const {
  int i = Index(column);
  if (i < 0) throw std::out_of_range(absl::StrCat("no column '", std::string(column), "' in result"));
  return static_cast<size_t>(i);
}

std::optional<int64_t> Row::OptInt(size_t i) const {
  const Value& v = values_.at(i);
  if (auto* p = std::get_if<int64_t>(&v)) return *p;
  if (auto* p = std::get_if<double>(&v)) return static_cast<int64_t>(*p);
  if (auto* p = std::get_if<std::string>(&v)) {
    int64_t out = 0;
    if (absl::SimpleAtoi(*p, &out)) return out;
    double d = 0;
    if (absl::SimpleAtod(*p, &d)) return static_cast<int64_t>(d);
    return 0;
  }
  return std::nullopt;
}

std::optional<double> Row::OptDouble(size_t i) const {
  const Value& v = values_.at(i);
  if (auto* p = std::get_if<double>(&v)) return *p;
  if (auto* p = std::get_if<int64_t>(&v)) return static_cast<double>(*p);
  if (auto* p = std::get_if<std::string>(&v)) {
    double d = 0;
    if (absl::SimpleAtod(*p, &d)) return d;
    return 0.0;
  }
  return std::nullopt;
}

std::optional<std::string> Row::OptString(size_t i) const {
  const Value& v = values_.at(i);
  if (auto* p = std::get_if<std::string>(&v)) return *p;
  if (auto* p = std::get_if<int64_t>(&v)) return absl::StrCat(*p);
  if (auto* p = std::get_if<double>(&v)) return absl::StrCat(*p);
  return std::nullopt;
}

int64_t Row::Int(size_t i) const { return OptInt(i).value_or(0); }
double Row::Double(size_t i) const { return OptDouble(i).value_or(0.0); }
std::string Row::String(size_t i) const { return OptString(i).value_or(std::string()); }

}  // namespace tuna::schema
