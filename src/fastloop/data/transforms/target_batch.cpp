#include "fastloop/data/transforms/target_batch.h"

#include "fastloop/data/codecs/image_decode.h"
#include "fastloop/data/transforms/float_ops.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

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

// The image through a value table into a [C, H, W] tensor of T.
template <typename T>
void image_write(const ImageU8& image, const std::vector<float>& table, T* out) {
  const int64_t C = image.channels, H = image.height, W = image.width;
  std::vector<T> lut(table.size());  // the table in T once: a lookup per value, no conversion
  for (size_t i = 0; i < table.size(); ++i) lut[i] = static_cast<T>(table[i]);
  for (int64_t c = 0; c < C; ++c) {  // plane by plane: sequential writes
    const T* lc = lut.data() + c * 256;
    T* plane = out + c * H * W;
    for (int64_t y = 0; y < H; ++y) {
      const uint8_t* px = image.row(y) + c;
      T* o = plane + y * W;
      for (int64_t x = 0; x < W; ++x) o[x] = lc[px[x * C]];
    }
  }
}

// The uint8 image through the output stage's value table (and a RandomErasing after it) into `out`, a [C, H, W]
// tensor of the pipeline's dtype. Written by plain loops: an ATen op large enough to run in parallel would wake,
// from this worker thread, an OpenMP team that spins on the cores the other workers need.
void image_output(const ImageU8& image, const Pipeline& pipeline, uint64_t seed, int64_t epoch, int64_t index,
                  at::Tensor& out) {
  const int64_t C = image.channels, H = image.height, W = image.width;
  const std::vector<float> table = pipeline.value_table(C);  // uint8: v itself
  const auto write = [&](auto* o) {
    using T = std::remove_pointer_t<decltype(o)>;
    image_write(image, table, o);
    pipeline.erase_output(o, C, H, W, H * W, W, 1, seed, epoch, index, [](T* at, float v) { *at = static_cast<T>(v); });
  };
  switch (pipeline.dtype()) {
    case StageDtype::kUInt8: image_write(image, table, out.data_ptr<uint8_t>()); return;
    case StageDtype::kFloat16: write(out.data_ptr<at::Half>()); return;
    case StageDtype::kBFloat16: write(out.data_ptr<at::BFloat16>()); return;
    case StageDtype::kFloat64: write(out.data_ptr<double>()); return;
    case StageDtype::kFloat32: write(out.data_ptr<float>()); return;
  }
}

// Where sample i of a batch is written: its slot of `stacked` (made at sample 0 when `stack`), else a tensor of
// its own, and then `stacked` is dropped (the samples already in it keep it as their views).
at::Tensor stack_slot(at::Tensor& stacked, int64_t i, int64_t count, bool stack, std::vector<int64_t> sizes,
                      at::ScalarType dtype, BatchBuffers& buffers) {
  if (i == 0 && stack) {
    std::vector<int64_t> all = sizes;
    all.insert(all.begin(), count);
    stacked = buffers.empty(all, dtype);
  }
  if (stacked.defined() && stacked.sizes().slice(1).equals(sizes) && stacked.scalar_type() == dtype) return stacked[i];
  stacked = at::Tensor();
  return at::empty(sizes, dtype);
}

// The targets as tensors: boxes in their output format, masks stacked (or the class map alone, in its slot of
// stack.masks).
void targets_output(const SampleTargets& targets, int64_t height, int64_t width, int64_t i, int64_t count,
                    bool fixed_size, TargetSample& out, TargetStack& stack, BatchBuffers& buffers) {
  if (targets.has_boxes) {
    std::vector<double> written;
    boxes_to_format(targets.boxes, targets.format, written);
    out.boxes = at::empty({static_cast<int64_t>(written.size() / 4), 4}, at::kFloat);
    std::copy(written.begin(), written.end(), out.boxes.data_ptr<float>());  // no ATen op: see image_output
    out.format = targets.format;
    out.labels = at::tensor(targets.labels, at::kLong);
    out.kept = at::tensor(targets.kept, at::kLong);
  }
  if (targets.has_keypoints) {
    std::vector<int64_t> shape = targets.keypoints_shape;
    shape.push_back(2);
    out.keypoints = at::empty(shape, at::kFloat);
    std::copy(targets.keypoints.begin(), targets.keypoints.end(), out.keypoints.data_ptr<float>());
  }
  const bool class_map = !targets.instance_masks && targets.masks.size() == 1;
  if (!class_map) stack.masks = at::Tensor();  // a batch of class maps only
  if (targets.masks.empty() && !targets.instance_masks) return;
  const int64_t count_masks = static_cast<int64_t>(targets.masks.size());
  out.masks = class_map ? stack_slot(stack.masks, i, count, fixed_size, {height, width}, at::kByte, buffers)
                        : at::empty({count_masks, height, width}, at::kByte);
  auto* to = out.masks.data_ptr<uint8_t>();
  for (int64_t m = 0; m < count_masks; ++m)
    std::memcpy(to + m * height * width, targets.masks[static_cast<size_t>(m)].data(), static_cast<size_t>(height * width));
}

void target_sample(const Dataset& dataset, int64_t index, const Pipeline& pipeline, uint64_t seed, int64_t epoch,
                   int64_t i, int64_t count, TargetSample& out, TargetStack& stack, BatchBuffers& buffers) {
  TargetWork& work = target_work();
  out.index = index;
  const std::string_view bytes = dataset.encoded->bytes(index, work.file);
  const RgbImage whole = work.decoder.decode(bytes, dataset.encoded->name(index));
  work.image.reshape(whole.height, whole.width, 3);
  std::memcpy(work.image.data(), whole.data, static_cast<size_t>(work.image.bytes()));
  work.targets = SampleTargets{};
  dataset.targets->sample_targets(index, whole.height, whole.width, work.targets);
  pipeline.run_targets(work.image, work.targets, seed, epoch, index, work.scratch);
  const ImageU8& image = work.image;
  const bool fixed_size = pipeline.output_size().known();  // every sample of the batch has this size
  if (pipeline.float_steps()) {  // operations on the float image: their tensor, copied without an ATen op
    const at::Tensor x = pipeline.run_float(image, &work.targets, seed, epoch, index, work.scratch);
    out.image = stack_slot(stack.images, i, count, fixed_size, x.sizes().vec(), x.scalar_type(), buffers);
    std::memcpy(out.image.data_ptr(), x.data_ptr(), x.nbytes());
    targets_output(work.targets, x.size(1), x.size(2), i, count, fixed_size, out, stack, buffers);
    return;
  }
  out.image = stack_slot(stack.images, i, count, fixed_size, {image.channels, image.height, image.width},
                         stage_scalar_type(pipeline.dtype()), buffers);
  image_output(image, pipeline, seed, epoch, index, out.image);
  targets_output(work.targets, image.height, image.width, i, count, fixed_size, out, stack, buffers);
}

}  // namespace

void target_batch_assemble(const Dataset& dataset, const int64_t* indices, int64_t count, const Pipeline& pipeline,
                           uint64_t seed, int64_t epoch, std::vector<TargetSample>& out, TargetStack& stack,
                           BatchBuffers& buffers) {
  out.assign(static_cast<size_t>(count), TargetSample{});
  stack = TargetStack{};
  for (int64_t i = 0; i < count; ++i)
    target_sample(dataset, indices[i], pipeline, seed, epoch, i, count, out[static_cast<size_t>(i)], stack, buffers);
}

} // namespace fastloop
