// A program outside fastloop's tree, as a user writes one: its own torch::nn::Module, registered under a
// name, trained by fastloop's loop (same config fields, checkpoints, evaluation) through the installed
// library. Without arguments it sets the config in code and exits non-zero when the run does not take its 8
// steps or leaves no checkpoint; with arguments it is `fastloop train` with those flags (train_main).
#include <fastloop/fastloop.h>  // the public API: the only fastloop header a user includes

#include <torch/torch.h>

#include <stdlib.h>  // mkdtemp

#include <filesystem>
#include <iostream>
#include <string>

// Any Module with forward(images [N, C, H, W]) -> logits [N, classes] derives from ClassifierImpl.
struct TinyNetImpl : fastloop::ClassifierImpl {
  explicit TinyNetImpl(const fastloop::ModelOptions& o)
      : conv(register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(o.in_channels(), 16, 3).padding(1)))),
        fc(register_module("fc", torch::nn::Linear(16, o.num_classes()))) {}
  at::Tensor forward(at::Tensor x) override {
    return fc(torch::flatten(torch::adaptive_avg_pool2d(torch::relu(conv(x)), {1, 1}), 1));
  }
  torch::nn::Conv2d conv;
  torch::nn::Linear fc;
};

int main(int argc, char** argv) {
  fastloop::model_register("tiny_net", [](const fastloop::ModelOptions& o) { return std::make_shared<TinyNetImpl>(o); });
  if (argc > 1) return fastloop::train_main(argc, argv);  // --model tiny_net and every other `fastloop train` flag
  fastloop::TrainConfig config;  // every field is a `fastloop train` flag (--model, --data, --epochs, ...)
  config.model.name = "tiny_net";
  config.data.source = "synthetic:1x12x12:256";
  config.data.batch_size = 32;
  config.perf.device = "cpu";
  config.run.epochs = 1;
  config.run.threads = 1;
  // Its own fresh folder (two runs at once do not share one), removed at the end.
  std::string folder = (std::filesystem::temp_directory_path() / "fastloop_consumer_XXXXXX").string();
  if (mkdtemp(folder.data()) == nullptr) return 1;
  config.run.checkpoint_dir = folder;
  const fastloop::TrainSummary summary = fastloop::train(config);
  const bool saved = std::filesystem::exists(fastloop::checkpoint_path_in(config.run.checkpoint_dir));
  std::filesystem::remove_all(folder);
  std::cout << "consumer: tiny_net trained " << summary.position.step << " steps, test accuracy "
            << summary.test.accuracy << (saved ? ", checkpoint written" : ", NO checkpoint") << "\n";
  return summary.position.step == 8 && saved ? 0 : 1;
}
