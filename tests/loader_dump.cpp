// fastloop_loader_dump: the batches `fastloop train FLAGS...` would train on, written to a safetensors file
// (images_K, labels_K for batch K of --dump-epoch), so tests/python can check that fastloop.Loader gives the
// same bits. It builds the run as train does (train_setup) and reads its train loader; nothing is trained.
#include "fastloop/run/config_flags.h"
#include "fastloop/run/exit_code.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/data/transforms/split_size.h"
#include "fastloop/io/weights.h"
#include "fastloop/train/setup.h"

#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  using namespace fastloop;
  CLI::App app{"Write the train loader's batches of a run to safetensors"};
  TrainConfig config;
  int64_t epoch = 0, batches = 2;
  std::string out;
  app.add_option("--dump-epoch", epoch, "epoch whose batches are written");
  app.add_option("--dump-batches", batches, "batches written (from the epoch's first)");
  app.add_option("--dump-out", out, "safetensors file")->required();
  config_flags_add(app, config);
  return exit_code_run([&] {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return app.exit(e) == 0 ? 0 : 2;
    }
    DatasetSplits data = data_load(config.data);
    splits_size_resolve(data, config.data);  // as train does: a transform's or the first video's frame size
    const TrainSetup setup = train_setup(config, data.train, c10::kCPU, nullptr);
    Loader loader(data.train, setup.train_loader);
    loader.start_epoch(epoch);
    NamedTensors tensors;
    for (int64_t k = 0; k < batches; ++k) {
      auto batch = loader.next();
      if (!batch) break;
      tensors.emplace_back("images_" + std::to_string(k), batch->images.contiguous());
      tensors.emplace_back("labels_" + std::to_string(k), batch->labels);
    }
    safetensors_write(out, tensors, {});
    return 0;
  });
}
