#include "tuner_core/json/json_text.h"

#include <cstdio>
#include <cstdlib>

namespace tuna {
namespace {

std::string Scalar(const Json& v) {
  return v.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

void Write(const Json& v, bool items_on_lines, std::string& out) {
  if (v.is_object()) {
    out += "{";
    bool first = true;
    for (const auto& [key, item] : v.items()) {
      if (!first) out += ", ";
      first = false;
      out += Scalar(Json(key));
      out += ": ";
      Write(item, items_on_lines, out);
    }
    out += "}";
  } else if (v.is_array()) {
    const bool lines = items_on_lines && !v.empty() && v.front().is_object();
    out += "[";
    for (size_t i = 0; i < v.size(); ++i) {
      out += lines ? (i ? ",\n  " : "\n  ") : (i ? ", " : "");
      Write(v[i], items_on_lines, out);
    }
    out += lines ? "\n]" : "]";
  } else {
    out += Scalar(v);
  }
}

}  // namespace

Json JsonMeasure(double v) {
  if (!std::isfinite(v)) return Json();
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return std::strtod(buf, nullptr);
}

std::string JsonText(const Json& value, bool items_on_lines) {
  std::string out;
  Write(value, items_on_lines, out);
  return out;
}

}  // namespace tuna
