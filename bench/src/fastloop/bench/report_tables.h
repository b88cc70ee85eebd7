// Internal to the bench printers: the tables of a result as text cells, built once and rendered by the
// markdown printer (report.cpp) and the HTML printer (report_html.cpp) alike, plus shared formatting and
// the markdown table that the loader and e2e reports print theirs with too.
#pragma once

#include "fastloop/bench/result.h"

#include <string>
#include <utility>
#include <vector>

namespace fastloop {

/// The phases of the split table and chart, in the order of TimeSplit's fields.
inline constexpr const char* kSplitNames[] = {"data-wait", "copy", "forward", "backward", "optimizer", "communication"};

struct ReportTable {
  std::string title;
  std::string note;                              // one sentence on what the numbers are
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

/// Rows in first-seen order × columns (a model, "model ×N" with N ranks) and the cell at each place.
struct ReportGrid {
  std::vector<std::string> rows, columns;
  std::vector<std::vector<const BenchCell*>> cells;  // [row][column]; null where the grid has no cell
};

ReportGrid report_grid(const BenchResult& result);
std::string report_column(const BenchCell& cell);

/// (label, value) pairs of the environment, in print order; empty values left out.
std::vector<std::pair<std::string, std::string>> report_environment(const BenchResult& result);
/// One sentence: batch, data, steps, warm-up, repetitions, threads.
std::string report_settings(const BenchResult& result);
std::vector<ReportTable> report_tables(const BenchResult& result);
/// "row: what it switches" lines split into (row, description).
std::vector<std::pair<std::string, std::string>> report_row_descriptions(const BenchResult& result);

/// The table in markdown, as every bench printer writes one (grid, loader, e2e): "## title" and the note
/// when the table has a title, then the header, the first column left-aligned and the others right.
std::string report_markdown(const ReportTable& table);

bool report_ok(const BenchCell& cell);           // status "ok": the cell has numbers
std::string report_fixed(double value, int digits);
std::string report_grouped(double value);        // 12,345
std::string report_ratio(double value);          // 1.23×, "-" for 0

} // namespace fastloop
