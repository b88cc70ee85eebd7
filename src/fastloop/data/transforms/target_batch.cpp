#include "fastloop/data/transforms/target_batch.h"

#include "fastloop/data/codecs/image_decode.h"

#include <ATen/ATen.h>

#include <cstring>
#include <string>

namespace fastloop {
namespace {

// A worker thread's buffers, kept across samples (thread_local: once grown, a sample allocates only its tensors).
struct TargetWork {
  ImageDecoder decoder;
  std::string file;
  ImageU8 image;
  SampleTargets targets;
  TransformScratch scratch;
};

TargetWork& target_work() {
  thread_local TargetWork work;
  return work;
}

// The uint8 image through the output stage's value table (and a RandomErasing after it) as a [C, H, W] tensor.
at::Tensor image_output(const ImageU8& image, const Pipeline& pipeline, uint64_t seed, int64_t epoch, int64_t index) {
  const int64_t C = image.channels, H = image.height, W = image.width;
  if (!pipeline.float_output()) {
    at::Tensor out = at::empty({C, H, W}, at::kByte);
    uint8_t* o = out.data_ptr<uint8_t>();
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x)
        for (int64_t c = 0; c < C; ++c) o[(c * H + y) * W + x] = image.row(y)[x * C + c];
    return out;
  }
  const std::vector<float> table = pipeline.value_table(C);
  at::Tensor out = at::empty({C, H, W}, at::kFloat);
  float* o = out.data_ptr<float>();
  for (int64_t y = 0; y < H; ++y)
    for (int64_t x = 0; x < W; ++x)
      for (int64_t c = 0; c < C; ++c) o[(c * H + y) * W + x] = table[static_cast<size_t>(c * 256 + image.row(y)[x * C + c])];
  pipeline.erase_output(o, C, H, W, H * W, W, 1, seed, epoch, index, [](float* at, float v) { *at = v; });
  const StageDtype dtype = pipeline.dtype();
  if (dtype == StageDtype::kFloat16) return out.to(at::kHalf);
  if (dtype == StageDtype::kBFloat16) return out.to(at::kBFloat16);
  if (dtype == StageDtype::kFloat64) return out.to(at::kDouble);
  return out;
}

// The targets as tensors: boxes in their output format, masks stacked (or the class map alone).
void targets_output(const SampleTargets& targets, int64_t height, int64_t width, TargetSample& out) {
  if (targets.has_boxes) {
    std::vector<double> written;
    boxes_to_format(targets.boxes, targets.format, written);
    out.boxes = at::tensor(written, at::kDouble).to(at::kFloat).view({-1, 4});
    out.format = targets.format;
    out.labels = at::tensor(targets.labels, at::kLong);
    out.kept = at::tensor(targets.kept, at::kLong);
  }
  if (targets.masks.empty() && !targets.instance_masks) return;
  const int64_t count = static_cast<int64_t>(targets.masks.size());
  out.masks = at::empty({count, height, width}, at::kByte);
  for (int64_t m = 0; m < count; ++m)
    std::memcpy(out.masks[m].data_ptr<uint8_t>(), targets.masks[static_cast<size_t>(m)].data(),
                static_cast<size_t>(height * width));
  if (!targets.instance_masks) out.masks = out.masks[0];
}

void target_sample(const Dataset& dataset, int64_t index, const Pipeline& pipeline, uint64_t seed, int64_t epoch,
                   TargetSample& out) {
  TargetWork& work = target_work();
  out.index = index;
  const std::string_view bytes = dataset.encoded->bytes(index, work.file);
  const RgbImage whole = work.decoder.decode(bytes, dataset.encoded->name(index));
  work.image.reshape(whole.height, whole.width, 3);
  std::memcpy(work.image.data(), whole.data, static_cast<size_t>(work.image.bytes()));
  work.targets = SampleTargets{};
  dataset.targets->sample_targets(index, whole.height, whole.width, work.targets);
  pipeline.run_targets(work.image, work.targets, seed, epoch, index, work.scratch);
  out.image = image_output(work.image, pipeline, seed, epoch, index);
  targets_output(work.targets, work.image.height, work.image.width, out);
}

}  // namespace

void target_batch_assemble(const Dataset& dataset, const int64_t* indices, int64_t count, const Pipeline& pipeline,
                           uint64_t seed, int64_t epoch, std::vector<TargetSample>& out) {
  out.assign(static_cast<size_t>(count), TargetSample{});
  for (int64_t i = 0; i < count; ++i) target_sample(dataset, indices[i], pipeline, seed, epoch, out[static_cast<size_t>(i)]);
}

} // namespace fastloop
