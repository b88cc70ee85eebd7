// Lookahead: two foreach kernels every k applied steps, a lerp of the slow weights and a copy back.
#include "fastloop/train/lookahead.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <string>

namespace fastloop {

Lookahead::Lookahead(const ClassifierImpl& model, LookaheadOptions options) : options_(options) {
  TORCH_CHECK(options_.steps() >= 1, "Lookahead: steps (k) must be >= 1, got ", options_.steps());
  TORCH_CHECK(options_.alpha() > 0 && options_.alpha() <= 1, "Lookahead: alpha must be in (0, 1], got ",
              options_.alpha());
  at::NoGradGuard no_grad;
  for (const auto& p : model.parameters()) slow_.push_back(p.detach().clone());  // clone keeps channels_last
}

void Lookahead::set(const ClassifierImpl& model) {
  const auto params = model.parameters();
  TORCH_CHECK(params.size() == slow_.size(), "Lookahead: the model has ", params.size(), " parameters, the slow "
              "weights ", slow_.size());
  at::NoGradGuard no_grad;
  at::_foreach_copy_(slow_, params);
  applied_ = 0;
}

bool Lookahead::step(ClassifierImpl& model) {
  if (++applied_ % options_.steps() != 0) return false;
  std::vector<at::Tensor> fast = model.parameters();
  at::NoGradGuard no_grad;
  // lerp: slow + alpha * (fast - slow), computed as fast - (1 - alpha) * (fast - slow) for alpha >= 0.5, so
  // alpha = 1 gives the fast weights exactly.
  at::_foreach_lerp_(slow_, fast, options_.alpha());
  at::_foreach_copy_(fast, slow_);
  return true;
}

void Lookahead::save(torch::serialize::OutputArchive& archive) const {
  for (size_t i = 0; i < slow_.size(); ++i) archive.write("slow_" + std::to_string(i), slow_[i], /*is_buffer=*/true);
  archive.write("applied", c10::IValue(applied_));
}

void Lookahead::load(torch::serialize::InputArchive& archive) {
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < slow_.size(); ++i) {
    at::Tensor saved;
    archive.read("slow_" + std::to_string(i), saved, /*is_buffer=*/true);
    TORCH_CHECK(saved.sizes() == slow_[i].sizes(), "Lookahead: slow weight ", i, " has shape ", saved.sizes(),
                ", this model's parameter ", slow_[i].sizes());
    slow_[i].copy_(saved);  // into this run's device and memory format
  }
  at::Tensor extra;
  TORCH_CHECK(!archive.try_read("slow_" + std::to_string(slow_.size()), extra, /*is_buffer=*/true),
              "Lookahead: the checkpoint has more slow weights than this model's ", slow_.size(), " parameters");
  c10::IValue applied;
  archive.read("applied", applied);
  applied_ = applied.toInt();
}

} // namespace fastloop
