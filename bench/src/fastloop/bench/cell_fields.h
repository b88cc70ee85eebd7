// The fields of a bench cell, declared once (as llama-bench's get_fields()): name, unit, meaning and
// how to read it from a BenchCell. The CSV header and rows and the JSON cells loop over this list, so a
// field added here appears in both under one name.
#pragma once

#include "fastloop/bench/result.h"

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace fastloop {

/// One field's value in one cell. monostate: not measured (JSON null, an empty CSV field); a vector holds
/// one value per repetition (JSON array, ';'-separated in CSV).
using BenchValue = std::variant<std::monostate, bool, int64_t, double, std::string, std::vector<double>>;

struct BenchField {
  std::string name;           // CSV column and JSON key
  const char* unit;           // "img/s", "s", "bytes", …; "" for labels, counts and ratios
  const char* group;          // the JSON object it sits in: "" (the cell itself), "split" or "ddp"
  bool multi_rank_only;       // JSON leaves it out of 1-rank cells (CSV rows keep every column)
  bool in_csv;                // false: JSON only (a duplicate kept for readers of earlier results)
  std::string about;          // what it measures
  std::function<BenchValue(const BenchCell&)> get;
};

/// Every field in CSV column order (JSON keys follow the same order within their object).
const std::vector<BenchField>& bench_cell_fields();

} // namespace fastloop
