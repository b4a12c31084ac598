// `tuna report`'s two forms of a Report (admin/report.h): a terminal table, and one
// self-contained HTML page (inline CSS and SVG charts; no scripts, fonts or other files) that a
// browser shows offline. Pure functions of the report; thread-safe.
#pragma once

#include <string>

#include "admin/report.h"

namespace tuna::admin {

// Summary lines, one table row per config and direction, failures by reason.
std::string ReportText(const Report& report);

// `generated` is printed in the page's header (e.g. a UTC time); the page is otherwise a
// function of the report only.
std::string ReportHtml(const Report& report, const std::string& generated);

}  // namespace tuna::admin
