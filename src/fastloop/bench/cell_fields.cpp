// The bench cell's field table (cell_fields.h). Order is the CSV's column order: fields added later go
// at the end, so scripts that read columns by position keep working.
#include "fastloop/bench/cell_fields.h"

namespace fastloop {

namespace {

BenchValue ratio(double value) {
  if (value > 0.0) return value;
  return std::monostate{};
}

}  // namespace

const std::vector<BenchField>& bench_cell_fields() {
  using C = const BenchCell&;
  static const std::vector<BenchField> fields = {
      {"model", "", "", false, true, "registry name", [](C c) -> BenchValue { return c.model; }},
      {"row", "", "", false, true, "bench row (the technique switched on)", [](C c) -> BenchValue { return c.row; }},
      {"nproc", "ranks", "", false, true, "processes; img/s are of all ranks together",
       [](C c) -> BenchValue { return c.nproc; }},
      {"status", "", "", false, true, "ok, n/a: reason, or failed: reason", [](C c) -> BenchValue { return c.status; }},
      {"eval_only", "", "", false, true, "the row measures evaluation only; train fields are 0",
       [](C c) -> BenchValue { return c.eval_only; }},
      {"train_img_per_s", "img/s", "", false, true, "training, lower median over repetitions",
       [](C c) -> BenchValue { return c.train_img_per_s; }},
      {"train_img_per_s_min", "img/s", "", false, true, "slowest repetition",
       [](C c) -> BenchValue { return c.train_img_per_s_min; }},
      {"train_img_per_s_max", "img/s", "", false, true, "fastest repetition",
       [](C c) -> BenchValue { return c.train_img_per_s_max; }},
      {"eval_img_per_s", "img/s", "", false, true, "evaluation, lower median over repetitions",
       [](C c) -> BenchValue { return c.eval_img_per_s; }},
      {"eval_img_per_s_min", "img/s", "", false, true, "slowest repetition",
       [](C c) -> BenchValue { return c.eval_img_per_s_min; }},
      {"eval_img_per_s_max", "img/s", "", false, true, "fastest repetition",
       [](C c) -> BenchValue { return c.eval_img_per_s_max; }},
      {"train_s", "s", "", false, true, "one epoch of the train split at train_img_per_s",
       [](C c) -> BenchValue { return c.train_s; }},
      {"test_s", "s", "", false, true, "the test split at eval_img_per_s", [](C c) -> BenchValue { return c.test_s; }},
      {"train_speedup", "", "", false, true, "train_img_per_s ÷ the baseline row's (same model, ranks, run); 0: none",
       [](C c) -> BenchValue { return c.train_speedup; }},
      {"eval_speedup", "", "", false, true, "eval_img_per_s ÷ the baseline row's",
       [](C c) -> BenchValue { return c.eval_speedup; }},
      {"data_wait_s", "s/step", "split", false, true, "waiting for the loader",
       [](C c) -> BenchValue { return c.split.data_wait; }},
      {"copy_s", "s/step", "split", false, true, "host to device copy", [](C c) -> BenchValue { return c.split.copy; }},
      {"forward_s", "s/step", "split", false, true, "forward and loss", [](C c) -> BenchValue { return c.split.forward; }},
      {"backward_s", "s/step", "split", false, true, "backward", [](C c) -> BenchValue { return c.split.backward; }},
      {"optimizer_s", "s/step", "split", false, true, "unscale, inf check, update, zero_grad",
       [](C c) -> BenchValue { return c.split.optimizer; }},
      {"communication_s", "s/step", "split", false, true, "DDP all-reduces waited for (not hidden by backward)",
       [](C c) -> BenchValue { return c.split.communication; }},
      {"step_s", "s/step", "split", false, true, "the phases above added up",
       [](C c) -> BenchValue { return c.split.total(); }},
      {"peak_memory_bytes", "bytes", "", false, true, "of the cell (kind in peak_memory_kind)",
       [](C c) -> BenchValue { return c.peak_memory_bytes; }},
      {"peak_memory_kind", "", "", false, true, "cuda_max_allocated or process_peak_rss",
       [](C c) -> BenchValue { return c.peak_memory_kind; }},
      {"eval_peak_memory_bytes", "bytes", "", false, true, "of the evaluation alone",
       [](C c) -> BenchValue { return c.eval_peak_memory_bytes; }},
      {"forward_flops", "FLOP/img", "", false, true, "multiply-adds × 2 of one image's forward pass",
       [](C c) -> BenchValue { return c.forward_flops; }},
      {"mfu", "", "", false, true, "forward_flops × 3 × train_img_per_s ÷ measured peak GEMM FLOP/s",
       [](C c) -> BenchValue { return c.mfu; }},
      {"threads", "", "", false, true, "intra-op threads of each rank", [](C c) -> BenchValue { return c.threads; }},
      {"buckets", "", "ddp", true, true, "DDP gradient buckets", [](C c) -> BenchValue { return c.buckets; }},
      {"allreduces_per_step", "", "ddp", true, true, "bucket all-reduces per optimizer step",
       [](C c) -> BenchValue { return c.allreduces_per_step; }},
      {"comm_span_s", "s/step", "ddp", true, true, "first all-reduce launched to last one finished",
       [](C c) -> BenchValue { return c.comm_span_s; }},
      {"comm_waited_s", "s/step", "ddp", true, false, "communication_s again, beside the span it is part of",
       [](C c) -> BenchValue { return c.split.communication; }},
      {"comm_hidden_fraction", "", "ddp", true, true, "1 − comm_waited_s ÷ comm_span_s: overlapped with backward",
       [](C c) -> BenchValue { return c.comm_hidden_fraction; }},
      {"nproc_speedup", "", "ddp", true, true, "img/s ÷ the same model and row with 1 rank",
       [](C c) -> BenchValue { return c.nproc_speedup; }},
      {"scaling_efficiency", "", "ddp", true, true, "nproc_speedup per device added (÷ N on CUDA, ÷ 1 on the CPU)",
       [](C c) -> BenchValue { return c.scaling_efficiency; }},
      {"python_status", "", "", false, true, "the PyTorch peer: \"\" (not run), ok or n/a: reason",
       [](C c) -> BenchValue { return c.python_status; }},
      {"python_train_img_per_s", "img/s", "", false, true, "the peer on the same cell, lower median",
       [](C c) -> BenchValue { return c.python_train_img_per_s; }},
      {"python_eval_img_per_s", "img/s", "", false, true, "the peer on the same cell, lower median",
       [](C c) -> BenchValue { return c.python_eval_img_per_s; }},
      {"train_vs_python", "", "", false, true,
       "fastloop ÷ PyTorch training img/s, lower median over interleaved pairs of repetitions; empty: not measured",
       [](C c) { return ratio(c.train_vs_python.median); }},
      {"eval_vs_python", "", "", false, true, "the same for evaluation",
       [](C c) { return ratio(c.eval_vs_python.median); }},
      {"train_img_per_s_reps", "img/s", "", false, true, "every repetition in the order they ran",
       [](C c) -> BenchValue { return c.train_img_per_s_reps; }},
      {"eval_img_per_s_reps", "img/s", "", false, true, "every repetition in the order they ran",
       [](C c) -> BenchValue { return c.eval_img_per_s_reps; }},
      {"python_train_img_per_s_reps", "img/s", "", false, true, "the peer's repetitions",
       [](C c) -> BenchValue { return c.python_train_img_per_s_reps; }},
      {"python_eval_img_per_s_reps", "img/s", "", false, true, "the peer's repetitions",
       [](C c) -> BenchValue { return c.python_eval_img_per_s_reps; }},
      {"train_vs_python_min", "", "", false, true, "slowest interleaved pair: fastloop ÷ PyTorch",
       [](C c) { return ratio(c.train_vs_python.min); }},
      {"train_vs_python_max", "", "", false, true, "fastest interleaved pair",
       [](C c) { return ratio(c.train_vs_python.max); }},
      {"train_vs_python_noisy", "", "", false, true,
       "the pairs spread wider than the ratio's distance from 1: noise, not an effect",
       [](C c) -> BenchValue { return c.train_vs_python.noisy; }},
      {"eval_vs_python_min", "", "", false, true, "slowest interleaved pair (evaluation)",
       [](C c) { return ratio(c.eval_vs_python.min); }},
      {"eval_vs_python_max", "", "", false, true, "fastest interleaved pair (evaluation)",
       [](C c) { return ratio(c.eval_vs_python.max); }},
      {"eval_vs_python_noisy", "", "", false, true, "as train_vs_python_noisy, for evaluation",
       [](C c) -> BenchValue { return c.eval_vs_python.noisy; }},
  };
  return fields;
}

} // namespace fastloop
