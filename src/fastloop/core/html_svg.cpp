// Shared by bench/report_html.cpp and plot/plot.cpp.
#include "fastloop/core/html_svg.h"

#include <cstdio>

namespace fastloop {

const char* const kChartColors[8] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                     "#59a14f", "#edc948", "#b07aa1", "#ff9da7"};

std::string html_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

void svg_legend(std::ostream& svg, const std::vector<std::string>& names, const char* const* palette, size_t n, double x) {
  char pos[64];
  for (size_t i = 0; i < names.size(); ++i) {
    const double lx = x + 130.0 * static_cast<double>(i);
    std::snprintf(pos, sizeof(pos), "x=\"%.1f\"", lx);
    svg << "<rect class=\"swatch\" " << pos << " y=\"8\" width=\"12\" height=\"12\" fill=\"" << palette[i % n] << "\"/>";
    std::snprintf(pos, sizeof(pos), "x=\"%.1f\"", lx + 16);
    svg << "<text " << pos << " y=\"18\">" << html_escape(names[i]) << "</text>";
  }
}

} // namespace fastloop
