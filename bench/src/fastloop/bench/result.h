// The result of `fastloop bench`: the settings it ran with, the machine, and one BenchCell per model ×
// row (× ranks), each with its comparisons. The runner (grid.h) fills it; the printers (report.h) and the
// field table (cell_fields.h) read it, so none of them depends on how it was measured.
#pragma once

#include "fastloop/core/stats.h"             // PairRatio
#include "fastloop/train/phase_recorder.h"  // TimeSplit: seconds per step by phase

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fastloop {

struct BenchResult;

struct BenchOptions {
  std::vector<std::string> models{"resnet18", "resnet50", "resnet101", "mobilenet_v2"};
  std::vector<std::string> rows;      // empty: every row (bench_row_names())
  int64_t repeat = 3;                 // repetitions per cell; median and spread over them
  int64_t steps = 5;                  // timed training steps per repetition (after warm-up)
  int64_t eval_steps = 5;             // timed evaluation batches per repetition
  int64_t warmup = 2;                 // untimed steps before each cell
  int64_t batch_size = 128;           // images per step (seed 001: 128)
  std::string data = "synthetic";     // synthetic | cifar10:DIR | fashion-mnist[:DIR] | imagefolder:DIR | shards:...
  int64_t image_size = 224;           // image folders and shards: side of the square crop (pixels)
  std::string stem = "auto";          // auto (imagenet on image folders and shards, cifar on in-memory data) | cifar | imagenet
  std::string device = "auto";        // auto | cpu | cuda
  int64_t threads = 0;                // intra-op threads; 0: the usable cores
  bool full = false;                  // seed 001's whole run: 5 epochs of CIFAR-10 per cell
  bool compare_python = false;        // run bench/peers/bench_peer.py on the same cells
  std::string twin;                   // a built-in model whose cells are timed alternately with each
                                      // torchscript:FILE cell of the same row (its scripted twin): "" none
  std::string python;                 // interpreter for the peer; empty: python_interpreter()'s
  std::string peer = "bench/peers/bench_peer.py";  // the peer script
  std::vector<int64_t> nproc{1};      // ranks per cell: every cell runs once per entry (DDP over Gloo/NCCL)
  double bucket_mb = 25.0;            // DDP gradient bucket size of the multi-rank cells
  std::string cli;                    // the fastloop executable that runs a multi-rank cell's ranks
                                      // (`fastloop bench` sets itself); needed only for nproc > 1
  bool progress = true;               // one line per finished cell on stderr
  /// Called after each cell with the result so far (speedups filled), e.g. to rewrite the report files,
  /// so a grid that is killed or fails later keeps what it measured.
  std::function<void(const BenchResult&)> on_cell;
};


/// This cell against another implementation of it timed in the same time window — the PyTorch peer, a
/// --twin, the twin in eager PyTorch — their repetitions interleaved with the cell's (A B B A). A new
/// kind of comparison is a new value of this type, with the same fill, text and fields.
struct Comparison {
  std::string name;                   // the other side: "PyTorch", the twin's model, "eager <twin>"
  std::string status;                 // "" (not run), "ok", "n/a: <reason>" or "failed: <reason>"
  double train_img_per_s = 0.0;       // its lower median over repetitions; 0: not measured
  double eval_img_per_s = 0.0;
  std::vector<double> train_img_per_s_reps, eval_img_per_s_reps;  // its repetitions in the order they ran
  PairRatio train, eval;              // this cell ÷ the other side over the interleaved pairs
  bool ran() const { return !status.empty(); }
};

struct BenchCell {
  std::string model;                  // registry name, e.g. "resnet18"
  std::string row;                    // row name, e.g. "amp"
  std::string status = "ok";          // "ok" or "n/a: <reason>" (the row cannot run here)
  bool eval_only = false;             // the row measures evaluation only (no-grad, fold-bn): train fields stay 0
  int64_t nproc = 1;                  // ranks (processes); images/s are of all ranks together
  int64_t threads = 0;                // intra-op threads of each rank
  double train_img_per_s = 0.0;       // median over repetitions
  double train_img_per_s_min = 0.0, train_img_per_s_max = 0.0;  // spread
  double eval_img_per_s = 0.0;
  double eval_img_per_s_min = 0.0, eval_img_per_s_max = 0.0;
  std::vector<double> train_img_per_s_reps;  // every repetition's img/s in the order they ran (empty: eval-only)
  std::vector<double> eval_img_per_s_reps;   //   the median and min–max above are taken over these
  double train_s = 0.0;               // seconds for one epoch of the data's train split at this rate (seed's "train: …s")
  double test_s = 0.0;                // seconds for the test split (seed's "test: …s")
  double train_speedup = 0.0;         // train_img_per_s ÷ the baseline row's, same model, same run; 0: no baseline
  double eval_speedup = 0.0;
  TimeSplit split;
  double peak_memory_bytes = 0.0;     // CUDA: max allocated during the cell; CPU: process peak RSS after it
  std::string peak_memory_kind;       // "cuda_max_allocated" | "process_peak_rss"
  double eval_peak_memory_bytes = 0.0;  // the same measure over the evaluation alone (reset before it)
  double forward_flops = 0.0;         // multiply-adds × 2 of one image's forward pass
  double mfu = 0.0;                   // forward_flops × 3 (fwd + bwd) × train img/s ÷ peak GEMM FLOP/s in the
                                      // cell's compute dtype (float32, or its --amp dtype); 0: that peak unknown
  // Multi-rank cells (nproc > 1):
  int64_t buckets = 0;                // DDP gradient buckets
  double allreduces_per_step = 0.0;   // bucket all-reduces per optimizer step (accumulation reduces once per step)
  double comm_span_s = 0.0;           // per step: from the first bucket's all-reduce launch to the last one's end
  double comm_hidden_fraction = 0.0;  // 1 − time waited for them ÷ comm_span_s: the share overlapped with backward
  double nproc_speedup = 0.0;         // images/s ÷ the same model and row with 1 rank in this run
  double scaling_efficiency = 0.0;    // nproc_speedup per device added: ÷ N on CUDA (a GPU per rank), ÷ 1 on the
                                      // CPU (the ranks split the same cores, so 1.0 means no loss from splitting)
  Comparison python;                  // --compare-python: the PyTorch peer on the same cell
  Comparison twin;                    // --twin on a torchscript:FILE cell: the built-in twin on the same row
  Comparison eager;                   // --twin with --compare-python: the twin in eager PyTorch (the peer's 2nd slot)
};

struct BenchEnvironment {
  std::string cpu_model;
  int64_t cores = 0;                  // usable by this process
  int64_t threads = 0;                // intra-op threads used
  std::string gpu;                    // name, "" on CPU
  std::string gpu_driver;             // CUDA driver / runtime, "" on CPU
  std::string device;                 // "cpu" | "cuda"
  std::string libtorch_version;
  std::string blas;                   // BLAS library in use
  std::string commit;                 // fastloop git commit
  double peak_gemm_gflops = 0.0;      // measured at start on the bench device (float32)
  std::string peak_gemm_method;       // how, e.g. "float32 1024x1024x1024 matmul, median of 5, 2 threads"
  double peak_gemm_bf16_gflops = 0.0; // the same in bf16, for bf16 autocast cells
  double peak_gemm_fp16_gflops = 0.0; // the same in fp16 (CUDA only; 0: not measured)
  std::string load_average;           // /proc/loadavg (1, 5, 15 min) at the start and the end: other work on the machine
  std::string pytorch_version;        // the peer's torch; "" when not compared
  std::string command;                // the command line that produced the result
  std::string date;                   // UTC, ISO 8601
};

/// The peak GEMM rate a cell computing under `amp` (off | bf16 | fp16) is measured against, GFLOP/s; 0 when
/// that dtype's rate was not measured (the cell then shows no MFU rather than one against float32).
double peak_gemm_gflops_for(const BenchEnvironment& environment, const std::string& amp);

struct BenchResult {
  BenchOptions options;
  BenchEnvironment environment;
  std::string config_json;            // resolved TrainConfig of the baseline row
  std::vector<std::string> row_descriptions;  // "row: what it switches", in row order
  std::vector<BenchCell> cells;       // models × rows (× nproc), in that order
  int64_t train_images = 0;           // images of one epoch behind train_s (synthetic data: CIFAR-10's 50,000)
  int64_t test_images = 0;            // images behind test_s (synthetic data: CIFAR-10's 10,000)
  double seconds = 0.0;               // wall time of the whole grid
};

} // namespace fastloop
