// Weight EMA (timm ModelEmaV2): one foreach multiply and add over the floating-point state per step.
#include "fastloop/train/ema.h"

#include "fastloop/dist/process_group.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>

namespace fastloop {

namespace {
void split_state(const torch::nn::Module& module, std::vector<at::Tensor>& floats, std::vector<at::Tensor>& integers) {
  for (const auto& t : module_state_tensors(module)) (t.is_floating_point() ? floats : integers).push_back(t);
}
}  // namespace

std::vector<at::Tensor> module_state_tensors(const torch::nn::Module& module) {
  std::vector<at::Tensor> out = module.parameters();
  for (const auto& b : module.buffers()) out.push_back(b);
  return out;
}

ModelEma::ModelEma(Classifier average, const ClassifierImpl& model, EmaOptions options)
    : average_(std::move(average)), options_(options) {
  split_state(*average_, floats_, integers_);
  for (auto& p : average_->parameters()) p.set_requires_grad(false);
  average_->eval();
  set(model);
}

void ModelEma::set(const ClassifierImpl& model) {
  std::vector<at::Tensor> floats, integers;
  split_state(model, floats, integers);
  TORCH_CHECK(floats.size() == floats_.size() && integers.size() == integers_.size(),
              "ModelEma: the average's architecture differs from the model's");
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < floats.size(); ++i) floats_[i].copy_(floats[i]);
  for (size_t i = 0; i < integers.size(); ++i) integers_[i].copy_(integers[i]);
}

double ModelEma::decay_at(int64_t step) const {
  if (!options_.warmup()) return options_.decay();
  const double s = static_cast<double>(step);
  return std::min(options_.decay(), (1.0 + s) / (10.0 + s));
}

void ModelEma::update(const ClassifierImpl& model, int64_t step) {
  std::vector<at::Tensor> floats, integers;
  split_state(model, floats, integers);
  const double decay = decay_at(step);
  at::NoGradGuard no_grad;
  // timm's update_fn: decay * e + (1 - decay) * m, each product rounded before the sum.
  at::_foreach_mul_(floats_, decay);
  at::_foreach_add_(floats_, at::_foreach_mul(floats, 1.0 - decay));
  for (size_t i = 0; i < integers.size(); ++i) integers_[i].copy_(integers[i]);
}

void ModelEma::sync(ProcessGroup& group) {
  std::vector<at::Tensor> all = floats_;
  all.insert(all.end(), integers_.begin(), integers_.end());
  group.broadcast(all, "broadcast of rank 0's EMA weights");
}

} // namespace fastloop
