// Writes the seed corpus of the checkpoint fuzzer (tests/fuzz_corpus/checkpoint/): real checkpoints of a
// Linear(2, 2), small enough to commit, with and without optimizer and scaler state. Run once by hand:
//   g++ -std=c++20 -Isrc -I$T/include -I$T/include/torch/csrc/api/include fuzz/checkpoint_seeds.cpp \
//     src/fastloop/train/checkpoint.cpp src/fastloop/train/amp.cpp src/fastloop/train/lookahead.cpp \
//     -L$T/lib -Wl,-rpath,$T/lib -ltorch_cpu -lc10 -lz -o build-fuzz/checkpoint_seeds && build-fuzz/checkpoint_seeds tests/fuzz_corpus/checkpoint
// where T is the venv's torch folder (python -c 'import os, torch; print(os.path.dirname(torch.__file__))').
#include "fastloop/train/amp.h"
#include "fastloop/train/checkpoint.h"

#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include <string>

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  torch::manual_seed(0);
  torch::nn::Linear model(2, 2);
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  model->forward(torch::ones({1, 2})).sum().backward();
  sgd.step();
  const std::string config = R"({"model.name":"small_cnn","run.epochs":1})";
  fastloop::checkpoint_save(dir + "/model_only.ckpt", *model, nullptr, {0, 1, 1}, config);
  fastloop::checkpoint_save(dir + "/with_sgd.ckpt", *model, &sgd, {2, 3, 7}, config);
  fastloop::GradScaler scaler;
  fastloop::checkpoint_save(dir + "/with_scaler.ckpt", *model, &sgd, {0, 0, 0}, "{}", &scaler);
  return 0;
}
