// Printers of a `fastloop bench` result: markdown in seed 001's table shape, CSV (one line per cell),
// JSON (options, resolved config, environment and every cell field) and one self-contained HTML page
// with SVG charts. Each starts with the environment the numbers were measured in.
#pragma once

#include "fastloop/bench/result.h"

#include <string>
#include <vector>

namespace fastloop {

/// Environment, settings, then tables of rows × models: "train: …s test: …s", img/s with speedup,
/// time split per step, peak memory and MFU, and "fastloop ÷ PyTorch" when the peer ran.
std::string bench_markdown(const BenchResult& result);

/// "# key: value" environment lines, a header, then one line per cell (n/a cells included).
std::string bench_csv(const BenchResult& result);

/// One JSON object: environment, options, config (the resolved TrainConfig as an object), rows with
/// their descriptions, and cells with every field plus the derived PyTorch ratios.
std::string bench_json(const BenchResult& result);

/// One HTML page, inline CSS and SVG only (no script, no external resource): environment, a grouped bar
/// chart of the speedup per row and model, a stacked bar chart of the time split per cell, the tables.
std::string bench_html(const BenchResult& result);

/// Writes PREFIX.md, PREFIX.csv, PREFIX.json and PREFIX.html and returns their paths; throws
/// InputError naming the file when one cannot be written.
std::vector<std::string> bench_write_reports(const BenchResult& result, const std::string& prefix);

} // namespace fastloop
