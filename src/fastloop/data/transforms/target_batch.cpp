#include "fastloop/data/transforms/target_batch.h"

#include "fastloop/data/codecs/image_decode.h"

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

// The uint8 image through the output stage's value table (and a RandomErasing after it) as a [C, H, W] tensor
// of the pipeline's dtype. Written by plain loops: an ATen op large enough to run in parallel would wake, from
// this worker thread, an OpenMP team that spins on the cores the other workers need.
at::Tensor image_output(const ImageU8& image, const Pipeline& pipeline, uint64_t seed, int64_t epoch, int64_t index) {
  const int64_t C = image.channels, H = image.height, W = image.width;
  const std::vector<float> table = pipeline.value_table(C);  // uint8: v itself
  const auto erase = [&](auto* o) {
    using T = std::remove_pointer_t<decltype(o)>;
    pipeline.erase_output(o, C, H, W, H * W, W, 1, seed, epoch, index, [](T* at, float v) { *at = static_cast<T>(v); });
  };
  switch (pipeline.dtype()) {
    case StageDtype::kUInt8: {
      at::Tensor out = at::empty({C, H, W}, at::kByte);
      image_write(image, table, out.data_ptr<uint8_t>());
      return out;
    }
    case StageDtype::kFloat16: {
      at::Tensor out = at::empty({C, H, W}, at::kHalf);
      image_write(image, table, out.data_ptr<at::Half>());
      erase(out.data_ptr<at::Half>());
      return out;
    }
    case StageDtype::kBFloat16: {
      at::Tensor out = at::empty({C, H, W}, at::kBFloat16);
      image_write(image, table, out.data_ptr<at::BFloat16>());
      erase(out.data_ptr<at::BFloat16>());
      return out;
    }
    case StageDtype::kFloat64: {
      at::Tensor out = at::empty({C, H, W}, at::kDouble);
      image_write(image, table, out.data_ptr<double>());
      erase(out.data_ptr<double>());
      return out;
    }
    case StageDtype::kFloat32: break;
  }
  at::Tensor out = at::empty({C, H, W}, at::kFloat);
  image_write(image, table, out.data_ptr<float>());
  erase(out.data_ptr<float>());
  return out;
}

// The targets as tensors: boxes in their output format, masks stacked (or the class map alone).
void targets_output(const SampleTargets& targets, int64_t height, int64_t width, TargetSample& out) {
  if (targets.has_boxes) {
    std::vector<double> written;
    boxes_to_format(targets.boxes, targets.format, written);
    out.boxes = at::empty({static_cast<int64_t>(written.size() / 4), 4}, at::kFloat);
    std::copy(written.begin(), written.end(), out.boxes.data_ptr<float>());  // no ATen op: see image_output
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
  for (int64_t i = 0; i < count; ++i)
    target_sample(dataset, indices[i], pipeline, seed, epoch, out[static_cast<size_t>(i)]);
}

} // namespace fastloop
