// Builds a registry model through the installed fastloop and runs one forward pass.
#include <fastloop/models/registry.h>

#include <torch/torch.h>

#include <iostream>

int main() {
  auto model = fastloop::model_make(fastloop::ModelOptions("small_cnn").in_channels(1).num_classes(10));
  auto logits = model->forward(torch::zeros({2, 1, 28, 28}));
  std::cout << "consumer: small_cnn " << fastloop::parameter_count(*model) << " parameters, logits "
            << logits.sizes() << "\n";
  return logits.size(0) == 2 && logits.size(1) == 10 ? 0 : 1;
}
