// Named-tensor export/import of models (a safetensors file's tensors: io/safetensors_tensors.h). Loading
// validates every name and shape before touching the model, so a strict failure changes nothing.
#include "fastloop/io/weights.h"

#include "fastloop/core/errors.h"
#include "fastloop/core/text.h"
#include "fastloop/models/fold_bn.h"

#include <torch/torch.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace fastloop {

namespace {

std::string shape_text(at::IntArrayRef shape) {
  std::ostringstream out;
  out << shape;
  return out.str();
}

/// Folds each BatchNorm2d into the conv registered just before it when their widths agree, in place.
void fold_batchnorms(const torch::nn::Module& model, NamedTensors& tensors) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < tensors.size(); ++i) index[tensors[i].first] = i;
  std::set<std::string> drop;
  std::vector<std::pair<size_t, std::pair<std::string, at::Tensor>>> biases;  // insert after the weight
  for (const auto& pair : conv_batchnorm_pairs(model)) {
    const std::string b = pair.bn_name + ".";
    const at::Tensor scale = tensors[index.at(b + "weight")].second /
                             (tensors[index.at(b + "running_var")].second + pair.bn->options.eps()).sqrt();
    at::Tensor& weight = tensors[index.at(pair.conv_name + ".weight")].second;
    weight = weight * scale.reshape({-1, 1, 1, 1});
    at::Tensor shift = tensors[index.at(b + "bias")].second - tensors[index.at(b + "running_mean")].second * scale;
    if (index.count(pair.conv_name + ".bias")) {
      at::Tensor& bias = tensors[index.at(pair.conv_name + ".bias")].second;
      bias = bias * scale + shift;
    } else {
      biases.push_back({index.at(pair.conv_name + ".weight"), {pair.conv_name + ".bias", shift}});
    }
    for (const char* n : {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}) drop.insert(b + n);
  }
  NamedTensors folded;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!drop.count(tensors[i].first)) folded.push_back(tensors[i]);
    for (const auto& [after, bias] : biases)
      if (after == i) folded.push_back(bias);
  }
  tensors = std::move(folded);
}

}  // namespace

NamedTensors model_state_export(const torch::nn::Module& model, bool fold_bn) {
  torch::NoGradGuard no_grad;
  NamedTensors out;
  for (const auto& p : model.named_parameters()) out.emplace_back(p.key(), p.value().detach().to(at::kCPU).clone());
  for (const auto& b : model.named_buffers()) out.emplace_back(b.key(), b.value().detach().to(at::kCPU).clone());
  if (fold_bn) {
    fold_bn_require(model);  // refused with its reason, not skipped, where it cannot apply
    fold_batchnorms(model, out);
  }
  return out;
}

StateLoadReport model_state_load(torch::nn::Module& model, const NamedTensors& tensors, bool strict,
                                 const std::string& skip_pattern) {
  std::regex skip;
  try {
    if (!skip_pattern.empty()) skip = std::regex(skip_pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw InputError("--init-skip '" + skip_pattern + "' is not a valid regular expression: " + e.what());
  }
  auto skipped = [&](const std::string& name) { return !skip_pattern.empty() && std::regex_search(name, skip); };

  std::map<std::string, at::Tensor> targets;
  std::vector<std::string> order;
  for (const auto& items : {model.named_parameters(), model.named_buffers()}) {
    for (const auto& item : items) {
      targets[item.key()] = item.value();
      order.push_back(item.key());
    }
  }
  std::map<std::string, const at::Tensor*> given;
  for (const auto& [name, tensor] : tensors) given[name] = &tensor;

  StateLoadReport report;
  std::vector<std::pair<at::Tensor, const at::Tensor*>> copies;
  for (const auto& name : order) {
    if (skipped(name)) {
      report.skipped.push_back(name);
      continue;
    }
    auto it = given.find(name);
    if (it == given.end()) {
      report.missing.push_back(name);
      continue;
    }
    const at::Tensor& target = targets.at(name);
    if (it->second->sizes() != target.sizes()) {
      report.mismatched.push_back(name + ": file " + shape_text(it->second->sizes()) + " vs model " +
                                  shape_text(target.sizes()));
      continue;
    }
    copies.emplace_back(target, it->second);
  }
  for (const auto& [name, tensor] : tensors) {
    (void)tensor;
    if (!targets.count(name) && !skipped(name)) report.unexpected.push_back(name);
  }
  if (strict && !report.complete())
    throw InputError("weights do not match the model (" + state_load_summary(report) +
                     "); use --init-non-strict to load what matches or --init-skip PATTERN to leave names out");
  torch::NoGradGuard no_grad;
  for (auto& [target, source] : copies) target.copy_(*source);
  report.loaded = copies.size();
  return report;
}

StateLoadReport model_state_load_file(torch::nn::Module& model, const std::string& path, bool strict,
                                      const std::string& skip_pattern) {
  const SafetensorsFile file = safetensors_read(path);
  try {
    return model_state_load(model, safetensors_tensors(file), strict, skip_pattern);
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.what());
  }
}

std::string state_load_summary(const StateLoadReport& report) {
  std::vector<std::string> parts;
  if (!report.missing.empty()) parts.push_back("missing: " + join(report.missing));
  if (!report.unexpected.empty()) parts.push_back("unexpected: " + join(report.unexpected));
  if (!report.mismatched.empty()) parts.push_back("mis-shaped: " + join(report.mismatched));
  if (!report.skipped.empty()) parts.push_back("skipped: " + join(report.skipped));
  return parts.empty() ? "all names match" : join(parts, "; ");
}

} // namespace fastloop
