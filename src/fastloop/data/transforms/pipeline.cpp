// The compiled pipeline of pipeline.h: the split into the uint8 part and the output stage, and the output
// stage's arithmetic per uint8 value, emulating torch's dtype rounding after each operation.
#include "fastloop/data/transforms/pipeline.h"
#include "fastloop/data/transforms/float_ops.h"
#include "fastloop/data/transforms/registry.h"

#include "fastloop/data/loader/sampler.h"

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <set>

namespace fastloop {
namespace {

constexpr uint64_t kStreamCropSalt = 0xc20b, kStreamFlipSalt = 0xf11b;  // the built-in crop and flip streams
constexpr uint64_t kStreamSalt = 0x7a3f;  // + position, from position 2 on: apart from kEraseSalt's 0xe7a5

const std::set<std::string>& output_stage_names() {
  static const std::set<std::string> names = {"ToTensor", "ToDtype", "ConvertImageDtype", "Normalize"};
  return names;
}

// The conversions to float and Normalize belong to the output stage: not inside a container.
void check_not_nested(const TransformSpec& spec, const std::string& container) {
  if (!container.empty() && output_stage_names().count(spec.name))
    throw TransformTypeError(spec.name + " inside " + container + " is not supported: fastloop applies the conversion "
                             "to float and Normalize once, at the top level of the pipeline, after the uint8 operations");
  auto visit = [&](const TransformValue& value) {
    for (const auto& child : value.transforms) check_not_nested(child, spec.name);
  };
  for (const auto& value : spec.positional) visit(value);
  for (const auto& [key, value] : spec.keywords) visit(value);
}

// A top-level Compose is its list: "Compose([A, B]), C" runs as "A, B, C" (a nested Compose of conversions too).
void compose_flatten(const std::vector<TransformSpec>& specs, std::vector<TransformSpec>& out) {
  for (const auto& spec : specs) {
    const TransformValue* list = nullptr;
    if (spec.name == "Compose" && spec.positional.size() == 1 && spec.keywords.empty()) list = &spec.positional[0];
    if (spec.name == "Compose" && spec.positional.empty() && spec.keywords.size() == 1 &&
        spec.keywords[0].first == "transforms")
      list = &spec.keywords[0].second;
    if (list && list->kind == TransformValue::Kind::kTransforms) {
      compose_flatten(list->transforms, out);
    } else {
      out.push_back(spec);
    }
  }
}

// A top-level UniformTemporalSubsample(num_samples), taken out of `specs`: a video loader picks a clip's frames
// with it before they are decoded, as fastloop.Loader takes it out of a v2.Compose. Its num_samples, or 0.
int64_t temporal_subsample_take(std::vector<TransformSpec>& specs) {
  int64_t taken = 0;
  for (auto it = specs.begin(); it != specs.end();) {
    if (it->name != "UniformTemporalSubsample") {
      ++it;
      continue;
    }
    if (taken) throw TransformTypeError("more than one UniformTemporalSubsample in the pipeline; keep one");
    const TransformValue* n = it->positional.size() == 1 && it->keywords.empty() ? &it->positional[0]
                              : it->positional.empty() && it->keywords.size() == 1 && it->keywords[0].first == "num_samples"
                                  ? &it->keywords[0].second : nullptr;
    if (!n || n->kind != TransformValue::Kind::kInt || n->integer < 1 || n->integer > 100000)
      throw TransformTypeError("UniformTemporalSubsample(num_samples) takes one whole number of frames in [1, 100000] "
                               "(e.g. UniformTemporalSubsample(8))");
    taken = n->integer;
    it = specs.erase(it);
  }
  return taken;
}

// torch's result of one operation in `dtype`: computed in float (opmath) for the 16-bit types, then rounded.
double dtype_round(double v, StageDtype dtype) {
  switch (dtype) {
    case StageDtype::kFloat64: return v;
    case StageDtype::kFloat32: return static_cast<float>(v);
    case StageDtype::kFloat16: return static_cast<float>(c10::Half(static_cast<float>(v)));
    case StageDtype::kBFloat16: return static_cast<float>(c10::BFloat16(static_cast<float>(v)));
    case StageDtype::kUInt8: return v;
  }
  return v;
}

}  // namespace

Draws pipeline_draws(uint64_t seed, int64_t epoch, int64_t index, int64_t position) {
  const uint64_t salt = position == 0 ? kStreamCropSalt : position == 1 ? kStreamFlipSalt : kStreamSalt + static_cast<uint64_t>(position);
  return Draws(hash_mix(seed ^ salt, static_cast<uint64_t>(epoch), static_cast<uint64_t>(index)));
}

std::vector<TransformPtr> pipeline_make(const std::vector<TransformSpec>& specs) {
  std::vector<TransformPtr> transforms;
  for (const auto& spec : specs) transforms.push_back(transform_registry().make(spec));
  return transforms;
}

std::string pipeline_repr(const std::vector<TransformPtr>& transforms) {
  std::string out;
  for (size_t i = 0; i < transforms.size(); ++i) out += (i ? ", " : "") + transforms[i]->repr();
  return out;
}

Pipeline::Pipeline(const std::string& spec) {
  std::vector<TransformSpec> specs;
  compose_flatten(spec_parse(spec), specs);
  for (const auto& one : specs) check_not_nested(one, "");
  temporal_subsample_ = temporal_subsample_take(specs);
  transforms_ = pipeline_make(specs);
  repr_ = pipeline_repr(transforms_);
  if (temporal_subsample_ > 0)
    repr_ = "UniformTemporalSubsample(" + std::to_string(temporal_subsample_) + ")" + (repr_.empty() ? "" : ", " + repr_);
  uint8_end_ = transforms_.size();
  std::string conversion;  // the repr of the conversion to float, once there is one
  std::vector<size_t> after_conversion;  // the conversion and the transforms after it that touch pixels
  for (size_t k = 0; k < transforms_.size(); ++k) {
    const Transform* t = transforms_[k].get();
    if (!t->touches_pixels()) {  // targets alone, or nothing: runs where it stands, after the uint8 part if there
      if (float_output()) after_uint8_.push_back(k);
      pure_tensors_ = pure_tensors_ || t->repr() == "ToPureTensor()";
      continue;
    }
    if (const auto* convert = dynamic_cast<const ConvertTransform*>(t)) {
      if (convert->mask_dtype()) mask_dtype_ = *convert->mask_dtype();
      if (convert->boxes_dtype()) boxes_dtype_ = *convert->boxes_dtype();
      if (convert->dtype() == StageDtype::kUInt8) {
        if (float_output() && convert->name() == "ToDtype")
          throw TransformTypeError(convert->repr() + " after " + conversion + ": converting the float image back to "
                                   "uint8 is not supported");
        continue;  // PILToTensor, ToImage, ToDtype(torch.uint8): uint8 stays uint8, a float tensor passes
      }
      if (!float_output()) uint8_end_ = k, conversion = convert->repr();
      dtype_ = convert->dtype();
      after_conversion.push_back(k);
    } else if (dynamic_cast<const NormalizeTransform*>(t) && !float_output()) {
      throw TransformTypeError("Normalize(): Input tensor should be a float tensor. Got torch.uint8. (put "
                               "ToDtype(torch.float32, scale=True) or ToTensor() before Normalize)");
    } else if (float_output()) {
      after_conversion.push_back(k);
    } else if (const auto* kernel = dynamic_cast<const FloatKernelTransform*>(t)) {
      if (!kernel->uint8_refusal().empty()) throw TransformTypeError(kernel->uint8_refusal());
    }
  }
  stage_split(after_conversion);
  for (size_t k = 0; k < uint8_end_; ++k) {
    const auto group = resize_crop_group(transforms_, k);
    if (group && group->first + group->count <= uint8_end_) fused_.push_back(*group), k += group->count - 1;
  }
  if (uint8_end_ > 0) head_ = dynamic_cast<const ResizePlanTransform*>(transforms_[0].get());
  if (head_ && uint8_end_ > 1) head_crop_ = dynamic_cast<const ResizePlanTransform*>(transforms_[1].get());
}

// A conversion or Normalize: a step of the value table.
bool is_table_step(const Transform* t) {
  return dynamic_cast<const ConvertTransform*>(t) || dynamic_cast<const NormalizeTransform*>(t);
}

void Pipeline::stage_split(const std::vector<size_t>& after_conversion) {
  const auto needs_float = [&](size_t k) {
    return !is_table_step(transforms_[k].get()) && !dynamic_cast<const RandomErasingTransform*>(transforms_[k].get());
  };
  if (std::none_of(after_conversion.begin(), after_conversion.end(), needs_float)) {  // a table, erasing the output
    for (const size_t k : after_conversion) {
      const Transform* t = transforms_[k].get();
      if (is_table_step(t)) output_steps_.push_back(t);
      else output_erasing_.push_back({dynamic_cast<const RandomErasingTransform*>(t), static_cast<int64_t>(k), output_steps_.size()});
    }
    return;
  }
  // The table up to the first other step; from there on, every transform runs on the float image in turn.
  size_t split = 0;
  while (is_table_step(transforms_[after_conversion[split]].get())) {
    const auto* t = transforms_[after_conversion[split]].get();
    output_steps_.push_back(t);
    if (const auto* convert = dynamic_cast<const ConvertTransform*>(t)) table_dtype_ = convert->dtype();
    ++split;
  }
  // The table's values per channel count (1 to 4), in double: float64 pipelines keep their precision.
  for (size_t channels = 1; channels < float_tables_.size(); ++channels)
    for (size_t c = 0; c < channels; ++c)
      for (int v = 0; v < 256; ++v) float_tables_[channels].push_back(output_value(v, static_cast<int64_t>(c), 0));
  const size_t first = after_conversion[split];
  for (size_t k = first; k < transforms_.size(); ++k)
    float_steps_.push_back({k, transforms_[k]->touches_pixels() ? float_step_make(transforms_[k]) : FloatStep{}});
  after_uint8_.erase(std::remove_if(after_uint8_.begin(), after_uint8_.end(), [&](size_t k) { return k > first; }),
                     after_uint8_.end());
}

at::Tensor Pipeline::run_float(const ImageU8& image, SampleTargets* targets, uint64_t seed, int64_t epoch,
                               int64_t index, TransformScratch& scratch) const {
  const auto channels = static_cast<size_t>(image.channels);
  TORCH_CHECK(channels < float_tables_.size(), "run_float: an image of ", channels, " channels");
  at::Tensor x = float_image_from_u8(image, float_tables_[channels], stage_scalar_type(table_dtype_));
  thread_local ImageU8 shadow;  // the uint8 kernels move the targets on an image of the float image's size
  for (const auto& [k, step] : float_steps_) {
    const Transform& t = *transforms_[k];
    Draws draws = pipeline_draws(seed, epoch, index, static_cast<int64_t>(k));
    if (!step || (targets && t.target_support() == TargetSupport::kMoves)) {
      shadow.reshape(x.size(1), x.size(2), x.size(0));
      Draws same = draws;
      if (targets) {
        t.apply_targets(shadow, *targets, same, scratch);
      } else {
        t.apply(shadow, same, scratch);  // a box operation on an image alone throws here, as in the uint8 part
      }
    }
    if (step) step(x, draws);
  }
  return x.contiguous();
}

ImageSize Pipeline::output_size(ImageSize in) const {
  for (const auto& transform : transforms_) in = transform->output_size(in);
  return in;
}

void Pipeline::run_u8(ImageU8& image, uint64_t seed, int64_t epoch, int64_t index, TransformScratch& scratch,
                      size_t first) const {
  run_from(image, nullptr, seed, epoch, index, scratch, first);
}

void Pipeline::run_targets(ImageU8& image, SampleTargets& targets, uint64_t seed, int64_t epoch, int64_t index,
                           TransformScratch& scratch) const {
  run_from(image, &targets, seed, epoch, index, scratch, 0);
}

void Pipeline::run_from(ImageU8& image, SampleTargets* targets, uint64_t seed, int64_t epoch, int64_t index,
                        TransformScratch& scratch, size_t first) const {
  const auto draws_at = [&](size_t k) { return pipeline_draws(seed, epoch, index, static_cast<int64_t>(k)); };
  auto group = std::find_if(fused_.begin(), fused_.end(), [&](const ResizeCropGroup& g) { return g.first >= first; });
  for (size_t k = first; k < uint8_end_;) {
    if (group != fused_.end() && group->first == k) {
      Draws draws[3] = {draws_at(k), draws_at(k + 1), draws_at(k + 2)};  // a group has 2 or 3 transforms
      resize_crop_apply(*group, image, targets, draws, scratch);
      k += group->count, ++group;
      continue;
    }
    Draws draws = draws_at(k);
    if (targets) {
      transforms_[k]->apply_targets(image, *targets, draws, scratch);
    } else {
      transforms_[k]->apply(image, draws, scratch);
    }
    ++k;
  }
  for (const size_t k : after_uint8_) {  // they touch no pixel: the conversion and Normalize commute with them
    Draws draws = draws_at(k);
    if (targets) {
      transforms_[k]->apply_targets(image, *targets, draws, scratch);
    } else {
      transforms_[k]->apply(image, draws, scratch);
    }
  }
}

void Pipeline::check_targets() const {
  for (const auto& transform : transforms_) {
    if (transform->target_support() == TargetSupport::kNone)
      throw TransformTypeError(transform->repr() + " cannot move bounding boxes and masks (torchvision: \"Inputs of "
                               "type BoundingBoxes are not supported\"); put it in an image-only pipeline");
  }
}

double Pipeline::output_value(double v, int64_t channel, size_t first_step) const {
  StageDtype dtype = StageDtype::kUInt8;
  for (size_t s = 0; s < first_step; ++s)
    if (const auto* convert = dynamic_cast<const ConvertTransform*>(output_steps_[s])) dtype = convert->dtype();
  double x = first_step == 0 ? v : dtype_round(v, dtype);  // the value tensor is cast to the image's dtype
  for (size_t s = first_step; s < output_steps_.size(); ++s) {
    if (const auto* convert = dynamic_cast<const ConvertTransform*>(output_steps_[s])) {
      // torch computes float16 and bfloat16 in float32 (opmath), float64 in float64
      const StageDtype opmath = convert->dtype() == StageDtype::kFloat64 ? StageDtype::kFloat64 : StageDtype::kFloat32;
      if (dtype == StageDtype::kUInt8) {  // uint8 -> float: ToTensor divides, to_dtype multiplies by 1 / 255
        const double in = dtype_round(x, convert->dtype());
        x = !convert->scale() ? in
            : convert->divide() ? static_cast<float>(static_cast<float>(x) / 255.0f)
                                : dtype_round(dtype_round(in * dtype_round(1.0 / 255.0, opmath), opmath), convert->dtype());
      } else {
        x = dtype_round(x, convert->dtype());  // float -> float: a cast
      }
      dtype = convert->dtype();
    } else if (const auto* normalize = dynamic_cast<const NormalizeTransform*>(output_steps_[s])) {
      auto at = [&](const std::vector<double>& values) {
        return dtype_round(values.size() == 1 ? values[0] : values[static_cast<size_t>(channel) % values.size()], dtype);
      };
      const StageDtype opmath = dtype == StageDtype::kFloat64 ? StageDtype::kFloat64 : StageDtype::kFloat32;
      x = dtype_round(dtype_round(x - at(normalize->mean()), opmath), dtype);
      x = dtype_round(dtype_round(x / at(normalize->std()), opmath), dtype);
    }
  }
  return x;
}

std::vector<float> Pipeline::value_table(int64_t channels) const {
  for (const Transform* step : output_steps_)
    if (const auto* normalize = dynamic_cast<const NormalizeTransform*>(step)) {
      for (const auto* values : {&normalize->mean(), &normalize->std()})
        if (values->size() != 1 && static_cast<int64_t>(values->size()) != channels)
          throw InputError(normalize->repr() + ": " + std::to_string(values->size()) + " values for an image of " +
                           std::to_string(channels) + " channels (torch cannot broadcast them)");
    }
  std::vector<float> table(static_cast<size_t>(channels * 256));
  for (int64_t c = 0; c < channels; ++c)
    for (int v = 0; v < 256; ++v) table[static_cast<size_t>(c * 256 + v)] = static_cast<float>(output_value(v, c, 0));
  return table;
}

} // namespace fastloop
