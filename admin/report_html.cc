// The HTML form of a report: summary cards, horizontal bar charts as inline SVG, the full
// table. No scripts and no external resources: the page renders offline and prints.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "admin/report_render.h"

namespace tuna::admin {

// admin/report.css, embedded at build time (admin/BUILD: report_css_embedded).
extern const char kReportCss[];

namespace {

constexpr char kGood[] = "#2e9e5b";
constexpr char kBad[] = "#d1495b";
constexpr char kNeutral[] = "#4a7bd0";
constexpr char kMuted[] = "#8892a0";

std::string Escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Ratio(const std::optional<double>& v) {
  return v ? absl::StrFormat("%.2f&times;", *v) : std::string("&ndash;");
}

const char* RatioColor(const std::optional<double>& v) {
  if (!v) return kMuted;
  return *v > 1.02 ? kGood : *v < 0.98 ? kBad : kMuted;
}

struct Bar {
  std::string label;
  double value = 0;
  std::string text;  // printed after the bar
  std::string color;
};

// Horizontal bars. `diverging`: log2 scale centred on 1 (ratios), bars grow right of the
// centre for values above 1 and left below it; else a linear scale from 0.
std::string BarChart(const std::string& title, const std::string& note,
                     const std::vector<Bar>& bars, bool diverging) {
  constexpr int kWidth = 960, kLabel = 360, kRow = 22, kTop = 34, kRight = 90;
  const int plot = kWidth - kLabel - kRight;
  const int height = kTop + static_cast<int>(bars.size()) * kRow + 12;
  double extent = diverging ? 0.25 : 0;  // log2 range each side, or the linear maximum
  for (const auto& b : bars) {
    extent = std::max(extent, diverging ? std::fabs(std::log2(std::max(b.value, 1e-9))) : b.value);
  }
  if (extent <= 0) extent = 1;
  const double zero = diverging ? kLabel + plot / 2.0 : kLabel;
  const double scale = diverging ? (plot / 2.0) / extent : plot / extent;
  std::string svg = absl::StrFormat(
      "<svg class=\"chart\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">"
      "<title>%s</title><text x=\"0\" y=\"18\" class=\"ct\">%s</text>"
      "<text x=\"%d\" y=\"18\" class=\"cn\" text-anchor=\"end\">%s</text>",
      kWidth, height, kWidth, height, Escape(title), Escape(title), kWidth, Escape(note));
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double y = kTop + static_cast<double>(i) * kRow;
    const double v = diverging ? std::log2(std::max(b.value, 1e-9)) : b.value;
    const double x0 = v >= 0 ? zero : zero + v * scale;
    const double w = std::max(1.0, std::fabs(v) * scale);
    if (i % 2 == 0) {
      absl::StrAppendFormat(&svg,
                            "<rect x=\"0\" y=\"%.1f\" width=\"%d\" height=\"%d\" class=\"zebra\"/>",
                            y, kWidth, kRow);
    }
    absl::StrAppendFormat(&svg,
                          "<text x=\"%d\" y=\"%.1f\" class=\"cl\" text-anchor=\"end\">%s</text>"
                          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" rx=\"3\" "
                          "fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" class=\"cv\">%s</text>",
                          kLabel - 8, y + 15, Escape(b.label), x0, y + 4, w, kRow - 8, b.color,
                          (v >= 0 ? x0 + w : zero) + 6, y + 15, b.text);
  }
  absl::StrAppendFormat(&svg,
                        "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" class=\"axis\"/></svg>",
                        zero, zero, kTop - 4, height - 8);
  return svg;
}

std::string RowLabel(const ReportRow& r) { return absl::StrCat(r.problem, "  ", r.direction); }

std::string Card(const std::string& label, const std::string& value, const std::string& sub,
                 const char* color) {
  return absl::StrFormat(
      "<div class=\"card\"><div class=\"cv2\" style=\"color:%s\">%s</div>"
      "<div class=\"cl2\">%s</div><div class=\"cs\">%s</div></div>",
      color, value, Escape(label), sub);
}

std::string Cards(const Report& r) {
  std::string out = "<div class=\"cards\">";
  out += Card("configs tuned", absl::StrCat(r.tuned, " / ", r.rows.size()),
              absl::StrCat(r.jobs, " jobs"), kNeutral);
  if (!r.other_label.empty()) {
    out += Card(absl::StrCat("geomean speed-up vs ", r.other_label), Ratio(r.geomean_vs_other),
                absl::StrCat(r.faster, " faster, ", r.slower, " slower of ", r.compared),
                RatioColor(r.geomean_vs_other));
  }
  out += Card("geomean speed-up vs default params", Ratio(r.geomean_vs_default),
              "the best solver's tuned vs default parameters", RatioColor(r.geomean_vs_default));
  out +=
      Card("tuning time", absl::StrFormat("%.0f s", r.tuning_seconds), "sum over jobs", kNeutral);
  out += Card("failed jobs", absl::StrCat(r.failed),
              absl::StrCat(r.failed_candidates.size(), " kinds of failed candidates"),
              r.failed ? kBad : kGood);
  return out + "</div>";
}

std::string Charts(const Report& r) {
  std::vector<Bar> other, dflt, time;
  for (const auto& row : r.rows) {
    if (row.vs_other) {
      other.push_back(
          {RowLabel(row), *row.vs_other, Ratio(row.vs_other), RatioColor(row.vs_other)});
    }
    if (row.vs_default) {
      dflt.push_back(
          {RowLabel(row), *row.vs_default, Ratio(row.vs_default), RatioColor(row.vs_default)});
    }
    time.push_back({RowLabel(row), row.tuning_seconds,
                    absl::StrFormat("%.1f s", row.tuning_seconds), kNeutral});
  }
  std::string out;
  if (!other.empty()) {
    out += BarChart(absl::StrCat("Speed-up vs ", r.other_label),
                    "right of the line: this session is faster (log scale)", other, true);
  }
  if (!dflt.empty()) {
    out += BarChart("Speed-up of tuned over default parameters",
                    "the best solver of each problem (log scale)", dflt, true);
  }
  out += BarChart("Tuning time per problem", "all of the problem's jobs", time, false);
  std::vector<Bar> failures;
  for (const auto& f : r.failed_jobs) {
    failures.push_back({f.reason, static_cast<double>(f.count), absl::StrCat(f.count), kBad});
  }
  for (const auto& f : r.failed_candidates) {
    failures.push_back({absl::StrCat("candidate: ", f.reason), static_cast<double>(f.count),
                        absl::StrCat(f.count), "#e3a33b"});
  }
  if (!failures.empty())
    out += BarChart("Failures by reason", "jobs and candidates", failures, false);
  return out;
}

std::string Table(const Report& r) {
  std::string out = absl::StrCat(
      "<table><thead><tr><th>problem (find-db key)</th><th>dir</th><th>best solver</th>"
      "<th>ms</th><th>",
      Escape(r.other_label.empty() ? "other" : r.other_label),
      "</th><th>vs other</th><th>default ms</th><th>vs default</th><th>tuning s</th>"
      "<th>failed</th></tr></thead><tbody>");
  auto ms = [](const std::optional<double>& v) {
    return v ? absl::StrFormat("%.4g", *v) : std::string("&ndash;");
  };
  for (const auto& row : r.rows) {
    absl::StrAppendFormat(
        &out,
        "<tr><td class=\"mono\">%s</td><td>%s</td><td>%s<div class=\"params\">%s</div></td>"
        "<td class=\"num\">%s</td><td class=\"num\">%s<div class=\"params\">%s</div></td>"
        "<td class=\"num\" style=\"color:%s\">%s</td><td class=\"num\">%s</td>"
        "<td class=\"num\" style=\"color:%s\">%s</td><td class=\"num\">%.1f</td>"
        "<td class=\"num\">%d / %d</td></tr>",
        Escape(row.problem), row.direction, Escape(row.best_solver.empty() ? "-" : row.best_solver),
        Escape(row.best_params), ms(row.best_ms), ms(row.other_ms), Escape(row.other_solver),
        RatioColor(row.vs_other), Ratio(row.vs_other), ms(row.default_ms),
        RatioColor(row.vs_default), Ratio(row.vs_default), row.tuning_seconds, row.failed_jobs,
        row.jobs);
  }
  return out + "</tbody></table>";
}

}  // namespace

std::string ReportHtml(const Report& r, const std::string& generated) {
  const std::string title =
      r.other_label.empty() ? r.label : absl::StrCat(r.label, " vs ", r.other_label);
  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tuna report: ",
      Escape(title), "</title><style>\n", kReportCss, "</style></head><body><header><h1>tuna report &mdash; ",
      Escape(title), "</h1><div class=\"sub\">", Escape(r.session.arch), ", ", r.session.num_cu,
      " CUs, ", Escape(r.session.backend), " &middot; generated ", Escape(generated),
      "</div></header><main>");
  out += Cards(r);
  out += "<section>" + Charts(r) + "</section>";
  out += "<section><h2>Per problem and direction</h2>" + Table(r) + "</section>";
  out += "</main></body></html>\n";
  return out;
}

}  // namespace tuna::admin
