// Pieces of the offline HTML pages (the bench report, `fastloop plot`'s curves): escaping, the colour
// palette and a legend row for inline SVG charts, so every page draws them the same way.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace fastloop {

/// Text made safe inside HTML/SVG elements and attribute values.
std::string html_escape(const std::string& s);

/// Tableau 10's first eight colours: one per model (bench) or run (plot).
extern const char* const kChartColors[8];
constexpr size_t kChartColorCount = 8;

/// A row of colour swatches with names, 130 px apart from `x`, at the top of a chart.
void svg_legend(std::ostream& svg, const std::vector<std::string>& names, const char* const* palette, size_t n, double x);

} // namespace fastloop
