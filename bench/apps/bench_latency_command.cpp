// `fastloop bench latency --checkpoint FILE`: batch-1 latency of predict's model path (run/predict_run.h's
// predict_latency), one JSON object with every timed iteration, for bench/predict_latency.py to set beside
// the exported TorchScript file, ONNX Runtime and PyTorch eager.
#include "../../apps/fastloop/commands.h"
#include "../../apps/fastloop/flag_checks.h"

#include "fastloop/run/predict_run.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>

namespace fastloop {

namespace {
struct LatencyFlags {
  PredictRequest request;
  int64_t warmup = 10;
  int64_t iterations = 100;
};
}  // namespace

Subcommand bench_latency_add(CLI::App& bench) {
  auto* app = bench.add_subcommand("latency", "Batch-1 latency of predict's model path (load, fold, graph, forward, "
                                              "softmax, top-k; no decoding): every iteration's seconds as JSON");
  auto f = std::make_shared<LatencyFlags>();
  app->add_option("--checkpoint", f->request.checkpoint, "checkpoint written by train");
  app->add_option("--model", f->request.model, "or torchscript:FILE.pt (an export of fastloop's)");
  app->add_option("--threads", f->request.threads, "intra-op threads (0: every usable core)")->capture_default_str();
  app->add_option("--warmup", f->warmup, "untimed iterations first")->capture_default_str();
  app->add_option("--iterations", f->iterations, "timed iterations")->check(kPositive)->capture_default_str();
  app->add_flag("!--no-fold-bn", f->request.fold_bn, "keep BatchNorm unfolded");
  app->add_flag("!--no-graph", f->request.graph, "run the model eagerly, not as its optimized inference graph");
  return {app, [f] {
            const std::vector<double> seconds = predict_latency(f->request, f->warmup, f->iterations);
            const nlohmann::json out = {{"seconds", seconds}, {"threads", f->request.threads},
                                        {"fold_bn", f->request.fold_bn}, {"graph", f->request.graph}};
            std::printf("%s\n", out.dump().c_str());
            return 0;
          }};
}

} // namespace fastloop
