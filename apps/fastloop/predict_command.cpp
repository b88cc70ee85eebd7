// `fastloop predict --checkpoint C [--topk 5] [--out preds.csv|preds.jsonl] INPUT...`: top-k classes of
// images by name, one row per image in timm's inference.py columns (path, indices, names, probabilities):
// CSV with index_1..k, label_1..k, prob_1..k columns (stdout without --out), or JSON lines with lists.
#include "commands.h"
#include "flag_checks.h"

#include "fastloop/run/predict_run.h"
#include "fastloop/core/errors.h"
#include "fastloop/core/text.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <memory>

namespace fastloop {

namespace {

struct PredictFlags {
  PredictRequest request;
  std::string out;
  std::string bad_image_policy = "stop";
  bool no_fold_bn = false;
  bool no_graph = false;
};

/// Writes rows as CSV or JSON lines, by the --out file's extension.
class PredictionWriter {
 public:
  explicit PredictionWriter(const std::string& path) : jsonl_(path.size() > 6 && path.rfind(".jsonl") == path.size() - 6) {
    if (!path.empty()) {
      file_.open(path);
      if (!file_) throw InputError("predict --out " + path + ": cannot write it; give a writable path");
    }
  }
  void write(const Prediction& p) {
    if (!jsonl_ && !header_written_) {  // k columns each: --topk, or the model's classes when fewer
      std::string header = "path";
      for (const char* col : {"index", "label", "prob"})
        for (size_t j = 1; j <= p.indices.size(); ++j) header += std::string(",") + col + "_" + std::to_string(j);
      line(header);
      header_written_ = true;
    }
    if (jsonl_) {
      line(nlohmann::json{{"path", p.path}, {"index", p.indices}, {"label", p.names}, {"prob", p.probabilities}}.dump());
      return;
    }
    std::string row = csv_field(p.path);
    for (auto i : p.indices) row += "," + std::to_string(i);
    for (const auto& n : p.names) row += "," + csv_field(n);
    char prob[32];
    for (float v : p.probabilities) std::snprintf(prob, sizeof(prob), ",%.6f", v), row += prob;
    line(row);
  }

 private:
  void line(const std::string& text) {
    if (file_.is_open()) file_ << text << '\n';
    else std::printf("%s\n", text.c_str());
  }
  bool jsonl_;
  bool header_written_ = false;
  std::ofstream file_;
};

}  // namespace

Subcommand predict_command(CLI::App& root) {
  auto* app = root.add_subcommand("predict", "Label images with a trained model: top-k classes by name");
  auto f = std::make_shared<PredictFlags>();
  auto& r = f->request;
  app->add_option("INPUT", r.inputs, "image files, folders (recursive), or --data sources (their test split)")->required();
  app->add_option("--checkpoint", r.checkpoint, "checkpoint written by train (its classes and transform come with it)");
  app->add_option("--init-from", r.init_from, "safetensors weights instead; needs --model and --num-classes");
  app->add_option("--model", r.model, "with --init-from: the model; or torchscript:FILE.pt (an export of fastloop's)");
  app->add_option("--stem", r.stem, "with --init-from: cifar | imagenet")->capture_default_str();
  app->add_option("--num-classes", r.num_classes, "with --init-from or TorchScript without fastloop's info: classes");
  app->add_option("--image-size", r.image.size, "with --init-from: crop side (default 224)")->check(CLI::Range(8, 4096));
  app->add_option("--mean", r.image.mean, "with --init-from: per-channel mean R,G,B (default ImageNet's)");
  app->add_option("--std", r.image.std, "with --init-from: per-channel std R,G,B (default ImageNet's)");
  app->add_option("--topk", r.topk, "classes per image")->check(kPositive)->capture_default_str();
  app->add_option("--out", f->out, "FILE.csv or FILE.jsonl (default: CSV on stdout)");
  app->add_option("--batch-size", r.batch_size, "images per batch")->check(kPositive)->capture_default_str();
  app->add_option("--workers", r.workers, "loader threads")->check(CLI::Range(0, 256))->capture_default_str();
  app->add_option("--threads", r.threads, "intra-op threads (0: all usable cores)")->check(kNonNegative);
  app->add_option("--bad-image-policy", f->bad_image_policy, "an undecodable image: stop with its path, or skip and report it")
      ->check(CLI::IsMember({"stop", "skip"}))->capture_default_str();
  app->add_flag("--no-fold-bn", f->no_fold_bn, "keep BatchNorm unfolded (folded by default where the model allows)");
  app->add_flag("--no-graph", f->no_graph, "run the model eagerly (by default a float32 model runs as its traced, frozen "
                "graph optimized for inference: oneDNN convolutions with their activations fused)");
  return {app, [f] {
            f->request.skip_bad_images = f->bad_image_policy == "skip";
            f->request.fold_bn = !f->no_fold_bn;
            f->request.graph = !f->no_graph;
            PredictionWriter writer(f->out);
            double last = 0.0;
            const PredictSummary summary = predict_run(
                f->request, [&](const Prediction& p) { writer.write(p); },
                [&](int64_t images, double seconds) {
                  if (seconds - last < 1.0) return;
                  last = seconds;
                  std::fprintf(stderr, "\rpredict: %lld images, %.0f img/s", static_cast<long long>(images), images / seconds);
                });
            std::fprintf(stderr, "\r");
            if (!summary.eager_reason.empty())
              std::fprintf(stderr, "predict: the model ran eagerly: %s\n", summary.eager_reason.c_str());
            for (const auto& bad : summary.bad) std::fprintf(stderr, "predict: skipped %s: undecodable\n", bad.c_str());
            std::fprintf(stderr, "predict: %lld images in %.1f s (%.0f img/s)%s\n", static_cast<long long>(summary.images),
                         summary.seconds, summary.seconds > 0 ? summary.images / summary.seconds : 0.0,
                         summary.bad.empty() ? "" : (", " + std::to_string(summary.bad.size()) + " skipped").c_str());
            return 0;
          }};
}

} // namespace fastloop
