// The bench result as one self-contained HTML page: inline CSS, inline SVG charts drawn at print time
// (no script, fonts or other resources to fetch), so the file opens offline in any browser.
#include "fastloop/bench/report.h"

#include "fastloop/bench/report_tables.h"
#include "fastloop/core/html_svg.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <sstream>

namespace fastloop {

namespace {

const char* const kSplitColors[] = {"#bab0ac", "#9c755f", "#4e79a7", "#f28e2b", "#59a14f", "#e15759"};

std::string num(double v) { return report_fixed(v, 1); }

std::string color(const char* const* palette, size_t n, size_t i) { return palette[i % n]; }

// Grouped vertical bars: one group per row, one bar per column (model); a dashed line at 1×. Cells
// without a value show "n/a" with their reason as a tooltip.
std::string ratio_chart(const ReportGrid& grid, const std::string& id, const std::string& title,
                        const std::function<double(const BenchCell&)>& value,
                        const std::function<std::string(const BenchCell&)>& missing) {
  const double bar = 14.0, gap = 18.0, left = 50.0, top = 34.0, plot_h = 220.0, bottom = 110.0;
  const double group = bar * static_cast<double>(grid.columns.size()) + gap;
  const double width = std::max(640.0, left + group * static_cast<double>(grid.rows.size()) + 20.0);
  double largest = 1.0;
  for (const auto& row : grid.cells)
    for (const BenchCell* c : row)
      if (c) largest = std::max(largest, value(*c));
  double step = 0.25;  // gridline spacing: the first of 0.25, 0.5, 1, 2, 5, 10, ... giving at most 6 lines
  for (int i = 0; largest * 1.05 / step > 6.0; ++i) step *= i > 0 && i % 3 == 0 ? 2.5 : 2.0;
  const int64_t ticks = static_cast<int64_t>(std::ceil(largest * 1.05 / step));
  const double top_value = step * static_cast<double>(ticks);
  auto y_of = [&](double v) { return top + plot_h * (1.0 - v / top_value); };
  std::ostringstream svg;
  svg << "<figure><figcaption>" << html_escape(title) << "</figcaption><svg class=\"chart\" id=\"" << id
      << "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\"" << num(top + plot_h + bottom)
      << "\" viewBox=\"0 0 " << num(width) << " " << num(top + plot_h + bottom) << "\">";
  svg_legend(svg, grid.columns, kChartColors, kChartColorCount, left);
  for (int64_t tick = 0; tick <= ticks; ++tick) {
    const double v = step * static_cast<double>(tick), y = y_of(v);
    svg << "<line class=\"grid\" x1=\"" << num(left) << "\" x2=\"" << num(width - 10) << "\" y1=\"" << num(y) << "\" y2=\""
        << num(y) << "\"/><text class=\"axis\" x=\"" << num(left - 4) << "\" y=\"" << num(y + 4) << "\">"
        << report_fixed(v, 2) << "×</text>";
  }
  svg << "<line class=\"one\" x1=\"" << num(left) << "\" x2=\"" << num(width - 10) << "\" y1=\"" << num(y_of(1.0))
      << "\" y2=\"" << num(y_of(1.0)) << "\"/>";
  for (size_t r = 0; r < grid.rows.size(); ++r) {
    const double gx = left + gap / 2 + group * static_cast<double>(r);
    for (size_t col = 0; col < grid.columns.size(); ++col) {
      const BenchCell* c = grid.cells[r][col];
      const double x = gx + bar * static_cast<double>(col);
      const std::string name = grid.columns[col] + " · " + grid.rows[r];
      const double v = c ? value(*c) : 0.0;
      if (v > 0.0) {
        svg << "<rect class=\"bar\" x=\"" << num(x) << "\" y=\"" << num(y_of(v)) << "\" width=\"" << num(bar - 2)
            << "\" height=\"" << num(top + plot_h - y_of(v)) << "\" fill=\"" << color(kChartColors, kChartColorCount, col)
            << "\"><title>" << html_escape(name) << ": " << report_ratio(v) << "</title></rect>";
      } else if (c) {
        svg << "<text class=\"na\" transform=\"translate(" << num(x + bar / 2 + 3) << "," << num(top + plot_h - 4)
            << ") rotate(-90)\">n/a<title>" << html_escape(name) << ": " << html_escape(missing(*c)) << "</title></text>";
      }
    }
    svg << "<text class=\"label\" transform=\"translate(" << num(gx + group / 2 - gap / 2) << "," << num(top + plot_h + 12)
        << ") rotate(-35)\">" << html_escape(grid.rows[r]) << "</text>";
  }
  svg << "</svg></figure>\n";
  return svg.str();
}

// Horizontal stacked bars, one per measured cell: milliseconds per training step by where they went.
std::string split_chart(const BenchResult& result) {
  std::vector<const BenchCell*> cells;
  for (const auto& c : result.cells)
    if (report_ok(c) && c.split.total() > 0.0) cells.push_back(&c);
  if (cells.empty()) return "<p>No time split was measured.</p>\n";
  double longest = 0.0;
  for (const BenchCell* c : cells) longest = std::max(longest, c->split.total());
  const double left = 210.0, top = 34.0, row_h = 18.0, plot_w = 560.0, width = left + plot_w + 80.0;
  const double height = top + row_h * static_cast<double>(cells.size()) + 10.0;
  std::ostringstream svg;
  svg << "<figure><figcaption>Time split of a training step (ms)</figcaption><svg class=\"chart\" id=\"time-split\" "
         "xmlns=\"http://www.w3.org/2000/svg\" width=\""
      << num(width) << "\" height=\"" << num(height) << "\" viewBox=\"0 0 " << num(width) << " " << num(height) << "\">";
  svg_legend(svg, {std::begin(kSplitNames), std::end(kSplitNames)}, kSplitColors, std::size(kSplitColors), 10.0);
  for (size_t i = 0; i < cells.size(); ++i) {
    const BenchCell& c = *cells[i];
    const double y = top + row_h * static_cast<double>(i);
    svg << "<text class=\"axis\" x=\"" << num(left - 6) << "\" y=\"" << num(y + 12) << "\">" << html_escape(report_column(c))
        << " · " << html_escape(c.row) << "</text>";
    const double parts[] = {c.split.data_wait, c.split.copy, c.split.forward, c.split.backward, c.split.optimizer,
                            c.split.communication};
    double x = left;
    for (size_t p = 0; p < std::size(parts); ++p) {
      if (parts[p] <= 0.0) continue;
      const double w = plot_w * parts[p] / longest;
      svg << "<rect class=\"bar\" x=\"" << num(x) << "\" y=\"" << num(y + 2) << "\" width=\"" << report_fixed(w, 2)
          << "\" height=\"" << num(row_h - 4) << "\" fill=\"" << kSplitColors[p] << "\"><title>" << html_escape(report_column(c))
          << " · " << html_escape(c.row) << " " << kSplitNames[p] << ": " << report_fixed(1e3 * parts[p], 1)
          << " ms</title></rect>";
      x += w;
    }
    svg << "<text x=\"" << num(x + 4) << "\" y=\"" << num(y + 12) << "\">" << report_fixed(1e3 * c.split.total(), 1)
        << " ms</text>";
  }
  svg << "</svg></figure>\n";
  return svg.str();
}

void html_table(std::ostringstream& html, const ReportTable& t) {
  html << "<h2>" << html_escape(t.title) << "</h2>\n<p>" << html_escape(t.note) << "</p>\n<table><thead><tr>";
  for (const auto& h : t.header) html << "<th>" << html_escape(h) << "</th>";
  html << "</tr></thead><tbody>\n";
  for (const auto& row : t.rows) {
    html << "<tr>";
    for (size_t i = 0; i < row.size(); ++i)
      html << (i == 0 ? "<th>" : row[i].rfind("n/a", 0) == 0 ? "<td class=\"na\">" : "<td>") << html_escape(row[i])
           << (i == 0 ? "</th>" : "</td>");
    html << "</tr>\n";
  }
  html << "</tbody></table>\n";
}

const char* const kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; max-width: 1400px; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; white-space: nowrap; }
th:first-child, .env th, .env td { text-align: left; }
.env td { white-space: normal; word-break: break-word; }
td.na { color: #888; font-style: italic; }
figure { margin: 1em 0; overflow-x: auto; }
figcaption { font-weight: 600; margin-bottom: 4px; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
svg text.axis { text-anchor: end; }
svg text.label { text-anchor: end; }
svg text.na { fill: #888; font-style: italic; }
svg line.grid { stroke: #e4e4e4; }
svg line.one { stroke: #555; stroke-dasharray: 4 3; }
code { background: #f4f4f4; padding: 1px 4px; }
)";

}  // namespace

std::string bench_html(const BenchResult& result) {
  const ReportGrid grid = report_grid(result);
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fastloop bench</title><style>" << kStyle
       << "</style></head><body>\n<h1>fastloop bench</h1>\n<table class=\"env\">";
  for (const auto& [key, value] : report_environment(result))
    html << "<tr><th>" << html_escape(key) << "</th><td>" << (key == "command" ? "<code>" + html_escape(value) + "</code>" : html_escape(value))
         << "</td></tr>";
  html << "</table>\n<p>" << html_escape(report_settings(result)) << "</p>\n";
  auto status = [](const BenchCell& c) {
    return !report_ok(c) ? c.status : c.eval_only ? std::string("evaluation-only row") : std::string("not measured");
  };
  html << ratio_chart(grid, "speedup-train", "Training speedup against the baseline row",
                      [](const BenchCell& c) { return report_ok(c) ? c.train_speedup : 0.0; }, status);
  html << ratio_chart(grid, "speedup-eval", "Evaluation speedup against the baseline row",
                      [](const BenchCell& c) { return report_ok(c) ? c.eval_speedup : 0.0; }, status);
  if (std::any_of(result.cells.begin(), result.cells.end(), [](const BenchCell& c) { return c.python.ran(); })) {
    auto peer_status = [](const BenchCell& c, bool train) {
      if (!report_ok(c)) return c.status;
      if (train && c.eval_only) return std::string("evaluation-only row");
      return c.python.status.empty() || c.python.status == "ok" ? std::string("not measured") : c.python.status;
    };
    html << ratio_chart(
        grid, "vs-pytorch", "Training img/s, fastloop ÷ PyTorch (median of interleaved pairs)",
        [](const BenchCell& c) { return report_ok(c) ? c.python.train.median : 0.0; },
        [&](const BenchCell& c) { return peer_status(c, true); });
    html << ratio_chart(
        grid, "vs-pytorch-eval", "Evaluation img/s, fastloop ÷ PyTorch (median of interleaved pairs)",
        [](const BenchCell& c) { return report_ok(c) ? c.python.eval.median : 0.0; },
        [&](const BenchCell& c) { return peer_status(c, false); });
  }
  html << split_chart(result);
  for (const auto& t : report_tables(result)) html_table(html, t);
  const auto rows = report_row_descriptions(result);
  if (!rows.empty()) {
    html << "<h2>Rows</h2>\n<ul>";
    for (const auto& [name, what] : rows) html << "<li><code>" << html_escape(name) << "</code>: " << html_escape(what) << "</li>";
    html << "</ul>\n";
  }
  html << "</body></html>\n";
  return html.str();
}

} // namespace fastloop
