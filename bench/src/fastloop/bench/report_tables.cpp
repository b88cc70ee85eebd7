// The tables of a bench result as text cells, shared by the markdown and HTML printers: seed 001's
// rows × models shape, the time split, memory and MFU, scaling over ranks and the interleaved ratios.
#include "fastloop/bench/report_tables.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace fastloop {

namespace {

std::vector<double> split_values(const TimeSplit& s) {
  return {s.data_wait, s.copy, s.forward, s.backward, s.optimizer, s.communication};
}

std::string bytes_text(double bytes) {
  if (bytes <= 0.0) return "-";
  if (bytes >= 1024.0 * 1024 * 1024) return report_fixed(bytes / (1024.0 * 1024 * 1024), 2) + " GiB";
  return report_fixed(bytes / (1024.0 * 1024), 0) + " MiB";
}

std::string seconds_text(const BenchCell& c) {  // seed 001: "train: 20.4s test: 1.4s"
  std::string out;
  if (c.train_s > 0.0) out += "train: " + report_fixed(c.train_s, 1) + "s";
  if (c.test_s > 0.0) out += std::string(out.empty() ? "" : " ") + "test: " + report_fixed(c.test_s, 1) + "s";
  return out.empty() ? "-" : out;
}

std::string rate_text(double median, double lo, double hi, double speedup) {
  if (median <= 0.0) return "-";
  std::string out = report_grouped(median);
  if (hi > lo) out += " (" + report_grouped(lo) + "–" + report_grouped(hi) + ")";
  if (speedup > 0.0) out += " " + report_ratio(speedup);
  return out;
}

// "1.05× (0.98–1.10)", with "~" first when the pairs spread wider than the ratio's distance from 1.
std::string pair_text(const PairRatio& r, double their_img_per_s) {
  return (r.noisy ? "~" : "") + report_ratio(r.median) + " (" + report_fixed(r.min, 2) + "–" + report_fixed(r.max, 2) +
         ") [" + report_grouped(their_img_per_s) + "]";
}

// "train 1.05× (…) [img/s] · eval …" for a comparison's status and its two ratios; "-" when not run.
std::string comparison_text(const Comparison& c) {
  if (!c.ran()) return "-";
  if (c.status != "ok") return c.status;
  std::string out;
  if (c.train.median > 0.0) out += "train " + pair_text(c.train, c.train_img_per_s);
  if (c.eval.median > 0.0) out += std::string(out.empty() ? "" : " · ") + "eval " + pair_text(c.eval, c.eval_img_per_s);
  return out.empty() ? "-" : out;
}

// Rows × columns with `text` of each ok cell; n/a cells show their status, missing cells "-".
template <typename Text>
ReportTable grid_table(const ReportGrid& grid, std::string title, std::string note, Text text) {
  ReportTable t{std::move(title), std::move(note), {"row"}, {}};
  t.header.insert(t.header.end(), grid.columns.begin(), grid.columns.end());
  for (size_t r = 0; r < grid.rows.size(); ++r) {
    std::vector<std::string> line{grid.rows[r]};
    for (const BenchCell* c : grid.cells[r]) line.push_back(!c ? "-" : report_ok(*c) ? text(*c) : c->status);
    t.rows.push_back(std::move(line));
  }
  return t;
}

// Milliseconds per step by phase, a row per measured cell.
ReportTable split_table(const BenchResult& result) {
  ReportTable split{"Where a training step's time goes",
                    "Milliseconds per training step, median over repetitions (on CUDA one extra marked repetition: the timed ones run without syncs inside).",
                    {"model", "row"},
                    {}};
  for (const char* name : kSplitNames) split.header.push_back(name);
  split.header.push_back("total");
  for (const auto& c : result.cells) {
    if (!report_ok(c) || c.split.total() <= 0.0) continue;
    std::vector<std::string> line{report_column(c), c.row};
    for (double v : split_values(c.split)) line.push_back(report_fixed(1e3 * v, 1));
    line.push_back(report_fixed(1e3 * c.split.total(), 1));
    split.rows.push_back(std::move(line));
  }
  return split;
}

// The multi-rank cells: img/s against one rank, buckets, communication and its overlap.
ReportTable scaling_table(const BenchResult& result) {
  ReportTable scaling{
      "Scaling over ranks",
      "DDP ranks on this machine (Gloo on the CPU, NCCL on CUDA), batch per rank as above. vs 1 rank: img/s ÷ the "
      "same model and row with one rank; efficiency: that per device added (÷ N on CUDA, a GPU per rank; ÷ 1 on "
      "the CPU, where the ranks split the same cores). Per step: bucket all-reduces, the time communication went "
      "on (first all-reduce launched to last finished) and the part the optimizer step waited for; hidden = 1 − "
      "waited ÷ communicating: the share overlapped with backward.",
      {"model", "row", "ranks", "threads/rank", "img/s", "vs 1 rank", "efficiency", "buckets", "all-reduces/step",
       "communicating ms/step", "waited ms/step", "hidden"},
      {}};
  for (const auto& c : result.cells) {
    if (!report_ok(c) || c.nproc <= 1) continue;
    const bool train = c.train_img_per_s > 0.0;
    auto ms = [&](double s) { return train ? report_fixed(1e3 * s, 1) : std::string("-"); };
    scaling.rows.push_back({c.model, c.row, std::to_string(c.nproc), std::to_string(c.threads),
                            report_grouped(train ? c.train_img_per_s : c.eval_img_per_s) + (train ? "" : " (eval)"),
                            report_ratio(c.nproc_speedup),
                            c.scaling_efficiency > 0.0 ? report_fixed(100.0 * c.scaling_efficiency, 0) + "%" : "-",
                            std::to_string(c.buckets), train ? report_fixed(c.allreduces_per_step, 1) : "-",
                            ms(c.comm_span_s), ms(c.split.communication),
                            train && c.comm_span_s > 0.0 ? report_fixed(100.0 * c.comm_hidden_fraction, 0) + "%" : "-"});
  }
  return scaling;
}

}  // namespace

bool report_ok(const BenchCell& cell) { return cell.status == "ok"; }

std::string report_fixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, value);
  return buf;
}

std::string report_grouped(double value) {
  const std::string digits = report_fixed(std::fabs(value), 0);
  std::string out = std::round(value) < 0.0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string report_ratio(double value) { return value > 0.0 ? report_fixed(value, 2) + "×" : "-"; }

std::string report_column(const BenchCell& cell) {
  return cell.nproc > 1 ? cell.model + " ×" + std::to_string(cell.nproc) : cell.model;
}

ReportGrid report_grid(const BenchResult& result) {
  ReportGrid grid;
  auto index = [](std::vector<std::string>& names, const std::string& name) {
    auto it = std::find(names.begin(), names.end(), name);
    if (it != names.end()) return static_cast<size_t>(it - names.begin());
    names.push_back(name);
    return names.size() - 1;
  };
  for (const auto& c : result.cells) {
    index(grid.rows, c.row);
    index(grid.columns, report_column(c));
  }
  grid.cells.assign(grid.rows.size(), std::vector<const BenchCell*>(grid.columns.size(), nullptr));
  for (const auto& c : result.cells) grid.cells[index(grid.rows, c.row)][index(grid.columns, report_column(c))] = &c;
  return grid;
}

std::vector<std::pair<std::string, std::string>> report_environment(const BenchResult& result) {
  const auto& e = result.environment;
  std::vector<std::pair<std::string, std::string>> out{
      {"CPU", e.cpu_model + (e.cores > 0 ? ", " + std::to_string(e.cores) + " usable cores" : "")},
      {"threads", e.threads > 0 ? std::to_string(e.threads) + " intra-op" : ""},
      {"device", e.device},
      {"GPU", e.gpu.empty() ? "none" : e.gpu + (e.gpu_driver.empty() ? "" : ", driver " + e.gpu_driver)},
      {"LibTorch", e.libtorch_version},
      {"BLAS", e.blas},
      {"peak GEMM", e.peak_gemm_gflops > 0 ? report_fixed(e.peak_gemm_gflops, 1) + " GFLOP/s (" +
                                                 (e.peak_gemm_method.empty() ? "float32, measured at start" : e.peak_gemm_method) + ")" +
                                                 (e.peak_gemm_bf16_gflops > 0 ? "; bf16 " + report_fixed(e.peak_gemm_bf16_gflops, 1) + " GFLOP/s" : "") +
                                                 (e.peak_gemm_fp16_gflops > 0 ? "; fp16 " + report_fixed(e.peak_gemm_fp16_gflops, 1) + " GFLOP/s" : "") +
                                                 " (MFU divides by the cell's dtype's)"
                                           : ""},
      {"load average", e.load_average},
      {"fastloop commit", e.commit},
      {"PyTorch peer", e.pytorch_version.empty() ? "" : "torch " + e.pytorch_version + " (bench/peers/bench_peer.py)"},
      {"date", e.date},
      {"command", e.command}};
  out.erase(std::remove_if(out.begin(), out.end(), [](const auto& kv) { return kv.second.empty(); }), out.end());
  return out;
}

std::string report_settings(const BenchResult& result) {
  const auto& o = result.options;
  std::ostringstream s;
  s << "Batch " << o.batch_size << ", data " << o.data << ", ";
  if (o.full)
    s << "5 epochs per cell (--full)";
  else
    s << o.steps << " training steps and " << o.eval_steps << " evaluation batches per repetition after " << o.warmup
      << " warm-up steps";
  s << ", median of " << o.repeat << " repetitions (spread in brackets). Evaluation is one forward per image, "
       "no test-time augmentation, on both sides.";
  if (result.train_images > 0 || result.test_images > 0)
    s << " Train and test seconds are for " << report_grouped(static_cast<double>(result.train_images)) << " and "
      << report_grouped(static_cast<double>(result.test_images)) << " images at the measured rates.";
  if (result.seconds > 0.0) s << " The grid took " << report_fixed(result.seconds, 0) << " s.";
  return s.str();
}

std::vector<std::pair<std::string, std::string>> report_row_descriptions(const BenchResult& result) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& line : result.row_descriptions) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos)
      out.emplace_back(line, "");
    else
      out.emplace_back(line.substr(0, colon), line.substr(colon + 1 + (line.size() > colon + 1 && line[colon + 1] == ' ')));
  }
  return out;
}

std::vector<ReportTable> report_tables(const BenchResult& result) {
  const ReportGrid grid = report_grid(result);
  std::vector<ReportTable> tables;
  tables.push_back(grid_table(grid, "Train and test time (seed 001's table)",
                              "Seconds for one epoch of the data's train split and for its test split at the measured rates.",
                              seconds_text));
  tables.push_back(grid_table(
      grid, "Images per second and speedup",
      "Median img/s (min–max over repetitions) and the speedup against the baseline row of the same model in this run.",
      [](const BenchCell& c) {
        std::string train = rate_text(c.train_img_per_s, c.train_img_per_s_min, c.train_img_per_s_max, c.train_speedup);
        std::string eval = rate_text(c.eval_img_per_s, c.eval_img_per_s_min, c.eval_img_per_s_max, c.eval_speedup);
        return c.eval_only ? "eval " + eval : "train " + train + " · eval " + eval;
      }));
  tables.push_back(split_table(result));
  tables.push_back(grid_table(
      grid, "Peak memory and model FLOP utilization",
      "Peak memory of training (evaluation in brackets): CUDA max allocated, or the process's peak RSS on CPU. MFU = forward FLOPs × 3 × train img/s ÷ peak GEMM.",
      [](const BenchCell& c) {
        std::string out = c.eval_only ? "eval " + bytes_text(c.eval_peak_memory_bytes > 0 ? c.eval_peak_memory_bytes : c.peak_memory_bytes)
                                      : bytes_text(c.peak_memory_bytes);
        if (!c.eval_only && c.eval_peak_memory_bytes > 0.0) out += " (eval " + bytes_text(c.eval_peak_memory_bytes) + ")";
        if (c.mfu > 0.0) out += " · MFU " + report_fixed(100.0 * c.mfu, 1) + "%";
        if (c.forward_flops > 0.0) out += " · " + report_fixed(c.forward_flops / 1e9, 2) + " GFLOP/img";
        return out;
      }));

  if (std::any_of(result.cells.begin(), result.cells.end(), [](const BenchCell& c) { return c.nproc > 1; }))
    tables.push_back(scaling_table(result));
  const std::string twin = "--twin " + result.options.twin;
  const struct {
    Comparison BenchCell::*member;
    std::string title, note;
  } comparisons[] = {
      {&BenchCell::python, "fastloop ÷ PyTorch",
       "fastloop img/s ÷ PyTorch img/s on the same cell (bench/peers/bench_peer.py), their repetitions interleaved "
       "(A B B A): median and min–max over the pairs; PyTorch's img/s in brackets. ~ marks a ratio whose pairs "
       "spread wider than its distance from 1×: the machine's noise, not an effect."},
      {&BenchCell::twin, "Scripted ÷ built-in (" + twin + ")",
       "img/s of each torchscript:FILE cell ÷ the built-in twin's on the same row, their repetitions interleaved "
       "(A B B A, with the PyTorch peer's when it runs): median and min–max over the pairs; the twin's img/s in "
       "brackets. ~ marks a ratio whose pairs spread wider than its distance from 1×."},
      {&BenchCell::eager, "Scripted ÷ PyTorch eager (" + twin + " in Python)",
       "img/s of each torchscript:FILE cell ÷ the built-in twin's architecture run eagerly in PyTorch "
       "(bench/peers/bench_peer.py, the twin's own row), their repetitions interleaved with the others': median and "
       "min–max over the pairs; eager PyTorch's img/s in brackets. ~ as above."}};
  for (const auto& k : comparisons) {
    const auto member = k.member;
    if (std::none_of(result.cells.begin(), result.cells.end(), [&](const BenchCell& c) { return (c.*member).ran(); }))
      continue;
    tables.push_back(grid_table(grid, k.title, k.note, [&](const BenchCell& c) { return comparison_text(c.*member); }));
  }
  return tables;
}

} // namespace fastloop
