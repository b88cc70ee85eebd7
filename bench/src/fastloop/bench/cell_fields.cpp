// The bench cell's field table (cell_fields.h). Order is the CSV's column order: fields added later go
// at the end, so scripts that read columns by position keep working.
#include "fastloop/bench/cell_fields.h"

namespace fastloop {

namespace {

using C = const BenchCell&;

BenchValue ratio(double value) {
  if (value > 0.0) return value;
  return std::monostate{};
}

/// A comparison's fields are named from its key: KEY_status, KEY_train_img_per_s, train_vs_KEY, …
struct ComparisonKey {
  const char* key;                    // "python", "twin", "eager"
  const char* who;                    // for the descriptions: "the PyTorch peer", …
  Comparison BenchCell::*member;
};
constexpr ComparisonKey kPython{"python", "the PyTorch peer", &BenchCell::python};
constexpr ComparisonKey kTwin{"twin", "the --twin", &BenchCell::twin};
constexpr ComparisonKey kEager{"eager", "the twin in eager PyTorch", &BenchCell::eager};

enum class Part { status, train, eval, train_vs, train_vs_min, train_vs_max, train_vs_noisy, eval_vs, eval_vs_min,
                  eval_vs_max, eval_vs_noisy, train_reps, eval_reps };
/// The column order of the comparisons added after the PyTorch peer (whose columns grew in two steps).
const std::vector<Part> kLaterOrder{Part::train, Part::eval, Part::train_vs, Part::train_vs_min, Part::train_vs_max,
                                    Part::train_vs_noisy, Part::eval_vs, Part::eval_vs_min, Part::eval_vs_max,
                                    Part::eval_vs_noisy, Part::train_reps, Part::eval_reps};

BenchField comparison_field(const ComparisonKey& k, Part part) {
  const auto m = k.member;
  const std::string key = k.key, who = k.who;
  auto pair = [&](bool train, const char* suffix, const std::string& about, auto get) {
    return BenchField{std::string(train ? "train" : "eval") + "_vs_" + key + suffix, "", "", false, true, about,
                      [m, train, get](C c) -> BenchValue { return get(train ? (c.*m).train : (c.*m).eval); }};
  };
  auto value = [&](const char* suffix, const char* unit, const std::string& about, auto get) {
    return BenchField{key + suffix, unit, "", false, true, about, [m, get](C c) { return get(c.*m); }};
  };
  const auto median = [](const PairRatio& r) { return ratio(r.median); };
  const auto min = [](const PairRatio& r) { return ratio(r.min); };
  const auto max = [](const PairRatio& r) { return ratio(r.max); };
  const auto noisy = [](const PairRatio& r) -> BenchValue { return r.noisy; };
  const std::string noise = "the pairs spread wider than the ratio's distance from 1: noise, not an effect";
  switch (part) {
    case Part::status:
      return value("_status", "", who + ": \"\" (not run), ok, n/a: reason or failed: reason",
                   [](const Comparison& x) -> BenchValue { return x.status; });
    case Part::train:
      return value("_train_img_per_s", "img/s", who + " on the same cell, lower median",
                   [](const Comparison& x) -> BenchValue { return x.train_img_per_s; });
    case Part::eval:
      return value("_eval_img_per_s", "img/s", who + " on the same cell, lower median",
                   [](const Comparison& x) -> BenchValue { return x.eval_img_per_s; });
    case Part::train_reps:
      return value("_train_img_per_s_reps", "img/s", who + "'s repetitions",
                   [](const Comparison& x) -> BenchValue { return x.train_img_per_s_reps; });
    case Part::eval_reps:
      return value("_eval_img_per_s_reps", "img/s", who + "'s repetitions",
                   [](const Comparison& x) -> BenchValue { return x.eval_img_per_s_reps; });
    case Part::train_vs:
      return pair(true, "", "this cell ÷ " + who + " (training img/s), lower median over interleaved pairs of "
                            "repetitions; empty: not measured", median);
    case Part::eval_vs: return pair(false, "", "the same for evaluation", median);
    case Part::train_vs_min: return pair(true, "_min", "slowest interleaved pair", min);
    case Part::train_vs_max: return pair(true, "_max", "fastest interleaved pair", max);
    case Part::train_vs_noisy: return pair(true, "_noisy", noise, noisy);
    case Part::eval_vs_min: return pair(false, "_min", "slowest interleaved pair (evaluation)", min);
    case Part::eval_vs_max: return pair(false, "_max", "fastest interleaved pair (evaluation)", max);
    case Part::eval_vs_noisy: return pair(false, "_noisy", noise + " (evaluation)", noisy);
  }
  return {};
}

void comparison_fields(std::vector<BenchField>& fields, const ComparisonKey& k, const std::vector<Part>& parts) {
  for (Part part : parts) fields.push_back(comparison_field(k, part));
}

std::vector<BenchField> fields_make() {
  std::vector<BenchField> fields = {
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
  };
  comparison_fields(fields, kPython, {Part::status, Part::train, Part::eval, Part::train_vs, Part::eval_vs});
  fields.insert(fields.end(), {
      {"train_img_per_s_reps", "img/s", "", false, true, "every repetition in the order they ran",
       [](C c) -> BenchValue { return c.train_img_per_s_reps; }},
      {"eval_img_per_s_reps", "img/s", "", false, true, "every repetition in the order they ran",
       [](C c) -> BenchValue { return c.eval_img_per_s_reps; }},
  });
  comparison_fields(fields, kPython, {Part::train_reps, Part::eval_reps, Part::train_vs_min, Part::train_vs_max,
                                      Part::train_vs_noisy, Part::eval_vs_min, Part::eval_vs_max, Part::eval_vs_noisy});
  fields.push_back({"twin", "", "", false, true, "--twin: the built-in model timed alternately with this torchscript:FILE cell",
                    [](C c) -> BenchValue { return c.twin.name; }});
  comparison_fields(fields, kTwin, kLaterOrder);
  fields.push_back({"eager_status", "", "", false, true, "--twin with --compare-python: the twin in eager PyTorch, as python_status",
                    [](C c) -> BenchValue { return c.eager.status; }});
  comparison_fields(fields, kEager, kLaterOrder);
  return fields;
}


}  // namespace

const std::vector<BenchField>& bench_cell_fields() {
  static const std::vector<BenchField> fields = fields_make();
  return fields;
}

} // namespace fastloop
