// Parameters and results of SQL statements as plain values.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tuna::schema {

// One bound parameter (`?`) or one result cell. Strings are byte strings: BLOB columns come back
// as std::string with embedded NULs intact. Integer columns come back as int64_t, FLOAT/DOUBLE as
// double, everything else (DECIMAL, DATETIME, text, blobs) as std::string, NULL as nullptr.
using Value = std::variant<int64_t, double, std::string, std::nullptr_t>;
using Params = std::vector<Value>;

class Row {
 public:
  Row(std::shared_ptr<const std::vector<std::string>> columns, std::vector<Value> values)
      : columns_(std::move(columns)), values_(std::move(values)) {}

  size_t size() const { return values_.size(); }
  const Value& operator[](size_t i) const { return values_.at(i); }
  // Column index by name (the SELECT's label); -1 when absent.
  int Index(std::string_view column) const;

  bool IsNull(size_t i) const { return std::holds_alternative<std::nullptr_t>(values_.at(i)); }
  // Lenient accessors: NULL gives 0 / 0.0 / "", a number stored as text is parsed, a double is
  // truncated for Int. Use operator[] for exact types. Out-of-range index throws std::out_of_range
  // (a programming error, like vector::at).
  int64_t Int(size_t i) const;
  double Double(size_t i) const;
  std::string String(size_t i) const;
  std::optional<int64_t> OptInt(size_t i) const;
  std::optional<double> OptDouble(size_t i) const;
  std::optional<std::string> OptString(size_t i) const;
  // By column name; a missing name throws std::out_of_range.
  int64_t Int(std::string_view column) const { return Int(Checked(column)); }
  double Double(std::string_view column) const { return Double(Checked(column)); }
  std::string String(std::string_view column) const { return String(Checked(column)); }
  bool IsNull(std::string_view column) const { return IsNull(Checked(column)); }

 private:
  size_t Checked(std::string_view column) const;
  std::shared_ptr<const std::vector<std::string>> columns_;
  std::vector<Value> values_;
};

// The full result of a query (fetched eagerly; keep result sets bounded with LIMIT).
class Rows {
 public:
  Rows() : columns_(std::make_shared<std::vector<std::string>>()) {}
  explicit Rows(std::vector<std::string> columns)
      : columns_(std::make_shared<std::vector<std::string>>(std::move(columns))) {}

  const std::vector<std::string>& columns() const { return *columns_; }
  void Add(std::vector<Value> values) { rows_.emplace_back(columns_, std::move(values)); }

  size_t size() const { return rows_.size(); }
  bool empty() const { return rows_.empty(); }
  const Row& operator[](size_t i) const { return rows_.at(i); }
  std::vector<Row>::const_iterator begin() const { return rows_.begin(); }
  std::vector<Row>::const_iterator end() const { return rows_.end(); }

 private:
  std::shared_ptr<const std::vector<std::string>> columns_;
  std::vector<Row> rows_;
};

}  // namespace tuna::schema
