// Line charts drawn at print time into inline SVG (no script, fonts or other resources), so the page
// opens offline. Each chart: nice-number axes, one polyline per run (log intervals) or markers joined by
// a dashed line (epoch ends); long runs are thinned to at most kMaxPoints points per line.
#include "fastloop/plot/plot.h"

#include "fastloop/core/html_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <sstream>

namespace fastloop {

namespace {

constexpr size_t kMaxPoints = 1500;
constexpr double kWidth = 600, kHeight = 300, kLeft = 64, kRight = 14, kTop = 30, kBottom = 42;

struct Series {
  size_t run = 0;      // colour index
  bool epochs = false; // epoch ends: markers and a dashed line; else log intervals: a solid line
  std::vector<std::pair<double, double>> points;  // (x, y), finite only
};

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string label(double v, bool percent) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.4g%s", percent ? 100.0 * v : v, percent ? "%" : "");
  return buf;
}

/// Ticks at 1, 2 or 5 × 10^k covering [lo, hi] in about five steps.
struct Axis {
  double lo = 0, hi = 1, step = 0.2;
  Axis(double min, double max) {
    if (!(max > min)) min -= std::max(std::fabs(min) * 0.1, 1e-3), max += std::max(std::fabs(max) * 0.1, 1e-3);
    const double raw = (max - min) / 5.0, magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double norm = raw / magnitude;
    step = (norm < 1.5 ? 1.0 : norm < 3.0 ? 2.0 : norm < 7.0 ? 5.0 : 10.0) * magnitude;
    lo = std::floor(min / step) * step;
    hi = std::ceil(max / step) * step;
  }
  int64_t ticks() const {  // at most 20: values near the double range leave no finite step
    const double n = (hi - lo) / step;
    return std::isfinite(n) ? std::clamp<int64_t>(std::llround(n), 0, 20) : 0;
  }
};

std::string short_name(const std::string& file) {
  std::string stem = std::filesystem::path(file).stem().string();
  return stem.size() > 18 ? stem.substr(0, 17) + "…" : stem;
}

void axis_lines(std::ostringstream& svg, const Axis& x, const Axis& y, bool percent, const std::string& x_label) {
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  for (int64_t i = 0; i <= y.ticks(); ++i) {
    const double v = y.lo + y.step * static_cast<double>(i), py = kTop + plot_h * (1.0 - (v - y.lo) / (y.hi - y.lo));
    svg << "<line class=\"grid\" x1=\"" << kLeft << "\" x2=\"" << kWidth - kRight << "\" y1=\"" << fixed(py, 1)
        << "\" y2=\"" << fixed(py, 1) << "\"/><text class=\"axis\" x=\"" << kLeft - 4 << "\" y=\"" << fixed(py + 4, 1)
        << "\">" << label(v, percent) << "</text>";
  }
  for (int64_t i = 0; i <= x.ticks(); ++i) {
    const double v = x.lo + x.step * static_cast<double>(i), px = kLeft + plot_w * (v - x.lo) / (x.hi - x.lo);
    svg << "<line class=\"grid\" x1=\"" << fixed(px, 1) << "\" x2=\"" << fixed(px, 1) << "\" y1=\"" << kTop << "\" y2=\""
        << kTop + plot_h << "\"/><text class=\"xaxis\" x=\"" << fixed(px, 1) << "\" y=\"" << kTop + plot_h + 14 << "\">"
        << label(v, false) << "</text>";
  }
  svg << "<text class=\"xaxis\" x=\"" << kLeft + plot_w / 2 << "\" y=\"" << kHeight - 6 << "\">" << html_escape(x_label)
      << "</text>";
}

std::string line_chart(const std::string& id, const std::string& title, const std::string& x_label,
                       const std::vector<Series>& series, const std::vector<std::string>& names, bool percent) {
  double x_min = INFINITY, x_max = -INFINITY, y_min = INFINITY, y_max = -INFINITY;
  for (const Series& s : series)
    for (const auto& [x, y] : s.points)
      x_min = std::min(x_min, x), x_max = std::max(x_max, x), y_min = std::min(y_min, y), y_max = std::max(y_max, y);
  std::ostringstream svg;
  svg << "<figure><figcaption>" << html_escape(title) << "</figcaption><svg class=\"chart\" id=\"" << id
      << "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight << "\" viewBox=\"0 0 "
      << kWidth << " " << kHeight << "\">";
  svg_legend(svg, names, kChartColors, kChartColorCount, kLeft);
  if (!std::isfinite(x_min)) {
    svg << "<text class=\"na\" x=\"" << kWidth / 2 << "\" y=\"" << kHeight / 2 << "\">no data</text></svg></figure>\n";
    return svg.str();
  }
  const Axis x(std::min(0.0, x_min), x_max), y(y_min, y_max);
  axis_lines(svg, x, y, percent, x_label);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto px = [&](double v) { return fixed(kLeft + plot_w * (v - x.lo) / (x.hi - x.lo), 1); };
  auto py = [&](double v) { return fixed(kTop + plot_h * (1.0 - (v - y.lo) / (y.hi - y.lo)), 1); };
  for (const Series& s : series) {
    if (s.points.empty()) continue;
    const char* color = kChartColors[s.run % kChartColorCount];
    const std::string name = html_escape(names[s.run]);
    svg << "<polyline class=\"series" << (s.epochs ? " epochs" : "") << "\" fill=\"none\" stroke=\"" << color
        << "\" points=\"";
    const size_t stride = (s.points.size() + kMaxPoints - 1) / kMaxPoints;
    for (size_t i = 0; i < s.points.size(); i += stride) svg << px(s.points[i].first) << "," << py(s.points[i].second) << " ";
    if ((s.points.size() - 1) % stride != 0) svg << px(s.points.back().first) << "," << py(s.points.back().second);
    svg << "\"><title>" << name << "</title></polyline>";
    if (!s.epochs) continue;
    for (const auto& [vx, vy] : s.points)
      svg << "<circle class=\"marker\" cx=\"" << px(vx) << "\" cy=\"" << py(vy) << "\" r=\"3\" fill=\"" << color
          << "\"><title>" << name << " at " << label(vx, false) << ": " << label(vy, percent) << "</title></circle>";
  }
  svg << "</svg></figure>\n";
  return svg.str();
}

using Field = double MetricsPoint::*;

/// One series per run of `field` against step or time, from the step lines or the epoch lines.
std::vector<Series> series_of(const std::vector<MetricsRun>& runs, bool epochs, Field field, bool against_time) {
  std::vector<Series> out;
  for (size_t r = 0; r < runs.size(); ++r) {
    Series s{r, epochs, {}};
    for (const MetricsPoint& p : epochs ? runs[r].epochs : runs[r].steps)
      if (std::isfinite(p.*field)) s.points.emplace_back(against_time ? p.elapsed_s : p.step, p.*field);
    out.push_back(std::move(s));
  }
  return out;
}

void runs_table(std::ostringstream& html, const std::vector<MetricsRun>& runs) {
  html << "<table><thead><tr><th>run</th><th>file</th><th>log lines</th><th>epochs</th><th>steps</th><th>time</th>"
          "<th>last test acc</th><th>best test acc</th></tr></thead><tbody>\n";
  for (size_t r = 0; r < runs.size(); ++r) {
    const MetricsRun& run = runs[r];
    double last_step = 0, last_time = 0, best = NAN, last_acc = NAN;
    for (const auto* list : {&run.steps, &run.epochs})
      for (const MetricsPoint& p : *list) last_step = std::max(last_step, p.step), last_time = std::max(last_time, p.elapsed_s);
    for (const MetricsPoint& p : run.epochs)
      if (std::isfinite(p.test_acc)) last_acc = p.test_acc, best = std::isfinite(best) ? std::max(best, p.test_acc) : p.test_acc;
    auto acc = [](double v) { return std::isfinite(v) ? fixed(100.0 * v, 2) + "%" : std::string("-"); };
    html << "<tr><th><span class=\"swatch\" style=\"background:" << kChartColors[r % kChartColorCount] << "\"></span>"
         << html_escape(short_name(run.name)) << "</th><td class=\"file\">" << html_escape(run.name) << "</td><td>"
         << run.steps.size() << "</td><td>" << run.epochs.size() << "</td><td>" << fixed(last_step, 0) << "</td><td>"
         << fixed(last_time, 1) << " s</td><td>" << acc(last_acc) << "</td><td>" << acc(best) << "</td></tr>\n";
  }
  html << "</tbody></table>\n";
}

const char* const kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; white-space: nowrap; }
th:first-child, td.file { text-align: left; }
span.swatch { display: inline-block; width: 12px; height: 12px; margin-right: 6px; vertical-align: -1px; }
.pair { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0.5em 0; }
figcaption { font-weight: 600; margin-bottom: 4px; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
svg text.axis { text-anchor: end; }
svg text.xaxis, svg text.na { text-anchor: middle; }
svg text.na { fill: #888; font-style: italic; }
svg line.grid { stroke: #e4e4e4; }
svg polyline.series { stroke-width: 1.5; }
svg polyline.epochs { stroke-dasharray: 5 3; }
)";

}  // namespace

std::string plot_html(const std::vector<MetricsRun>& runs) {
  std::vector<std::string> names;
  for (const MetricsRun& run : runs) names.push_back(short_name(run.name));
  struct Metric {
    const char* id;
    const char* title;
    std::vector<std::pair<bool, Field>> parts;  // (from epoch lines, field)
    bool percent;
  };
  const Metric metrics[] = {
      {"loss", "Loss (solid: training, per log interval; dashed: test, per epoch)",
       {{false, &MetricsPoint::train_loss}, {true, &MetricsPoint::test_loss}}, false},
      {"accuracy", "Test accuracy (per epoch)", {{true, &MetricsPoint::test_acc}}, true},
      {"lr", "Learning rate", {{false, &MetricsPoint::lr}}, false},
      {"img-per-s", "Training images/s (per log interval)", {{false, &MetricsPoint::img_per_s}}, false},
  };
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fastloop curves</title><style>"
       << kStyle << "</style></head><body>\n<h1>fastloop training curves</h1>\n";
  runs_table(html, runs);
  for (const Metric& m : metrics) {
    html << "<div class=\"pair\">\n";
    for (const bool against_time : {false, true}) {
      std::vector<Series> series;
      for (const auto& [epochs, field] : m.parts)
        for (Series& s : series_of(runs, epochs, field, against_time)) series.push_back(std::move(s));
      html << line_chart(std::string(m.id) + (against_time ? "-time" : "-step"),
                         std::string(m.title) + (against_time ? " against time" : " against steps"),
                         against_time ? "seconds since the run started" : "optimizer steps", series, names, m.percent);
    }
    html << "</div>\n";
  }
  html << "</body></html>\n";
  return html.str();
}

} // namespace fastloop
