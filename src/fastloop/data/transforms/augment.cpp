// Fused batch assembly: a 256-entry lookup table per channel, already in the output dtype, turns a uint8
// pixel into its normalized value, so the inner loop is a gather and a store; padding reads as pixel
// value 0, as in torchvision. One template instance per (dtype, layout).
#include "fastloop/data/transforms/augment.h"

#include "fastloop/data/transforms/image_augment.h"
#include "fastloop/data/transforms/float_ops.h"
#include "fastloop/data/transforms/pipeline.h"
#include "fastloop/data/transforms/random_erasing.h"
#include "fastloop/data/loader/sampler.h"

#include <ATen/ATen.h>

#include <stdexcept>
#include <string>

namespace fastloop {

SampleDraw augment_draw(const AugmentOptions& options, uint64_t seed, int64_t epoch, int64_t index) {
  const uint64_t r = hash_mix(seed, static_cast<uint64_t>(epoch), static_cast<uint64_t>(index));
  SampleDraw draw;
  const int64_t pad = options.crop ? options.pad : 0;
  draw.oy = draw.ox = pad;
  if (pad > 0) {
    draw.oy = static_cast<int64_t>(r % static_cast<uint64_t>(2 * pad + 1));
    draw.ox = static_cast<int64_t>((r >> 16) % static_cast<uint64_t>(2 * pad + 1));
  }
  draw.flip = flip_decide(options, epoch, [&](int64_t e) {
    const uint64_t bits = e == epoch ? r : hash_mix(seed, static_cast<uint64_t>(e), static_cast<uint64_t>(index));
    return static_cast<bool>((bits >> 40) & 1u);
  });
  return draw;
}

std::vector<float> normalize_lut(const Dataset& dataset) {
  const int64_t C = dataset.channels();
  std::vector<float> lut(static_cast<size_t>(C * 256));
  for (int64_t c = 0; c < C; ++c) {
    const float mean = dataset.mean.empty() ? 0.f : dataset.mean[static_cast<size_t>(c)];
    const float std = dataset.stddev.empty() ? 1.f : dataset.stddev[static_cast<size_t>(c)];
    for (int v = 0; v < 256; ++v) lut[static_cast<size_t>(c * 256 + v)] = (static_cast<float>(v) / 255.f - mean) / std;
  }
  return lut;
}

namespace {

// One sample: `in` is its uint8 [C, H, W], `out` its slot of the batch (NCHW or NHWC).
template <typename T, bool kChannelsLast>
void sample_write(const uint8_t* in, T* out, const T* lut, int64_t C, int64_t H, int64_t W, int64_t pad,
                  const SampleDraw& draw) {
  const int64_t plane = H * W;
  const int64_t dy = draw.oy - pad, dx = draw.ox - pad;  // source shift in the unpadded image
  // Output columns [x0, x1) read inside the image; the rest read the zero padding.
  int64_t x0 = 0, x1 = W;
  if (!draw.flip) {
    x0 = std::max<int64_t>(0, -dx), x1 = std::min<int64_t>(W, W - dx);
  } else {  // sx = W - 1 - x + dx in [0, W)  <=>  x in [dx, W + dx)
    x0 = std::max<int64_t>(0, dx), x1 = std::min<int64_t>(W, W + dx);
  }
  for (int64_t c = 0; c < C; ++c) {
    const T* table = lut + c * 256;
    const T zero = table[0];
    const uint8_t* in_c = in + c * plane;
    for (int64_t y = 0; y < H; ++y) {
      const int64_t sy = y + dy;
      T* row = kChannelsLast ? out + y * W * C + c : out + c * plane + y * W;
      const int64_t step = kChannelsLast ? C : 1;  // elements between neighbouring x
      if (sy < 0 || sy >= H) {
        for (int64_t x = 0; x < W; ++x) row[x * step] = zero;
        continue;
      }
      const uint8_t* in_row = in_c + sy * W;
      for (int64_t x = 0; x < x0; ++x) row[x * step] = zero;
      if (!draw.flip) {
        for (int64_t x = x0; x < x1; ++x) row[x * step] = table[in_row[x + dx]];
      } else {
        for (int64_t x = x0; x < x1; ++x) row[x * step] = table[in_row[W - 1 + dx - x]];
      }
      for (int64_t x = x1; x < W; ++x) row[x * step] = zero;
    }
  }
}

template <typename T, bool kChannelsLast>
void batch_write(const Dataset& dataset, const int64_t* indices, int64_t count, const AugmentOptions& options,
                 uint64_t seed, int64_t epoch, T* dst, int64_t* dst_labels) {
  const int64_t C = dataset.channels(), H = dataset.height(), W = dataset.width(), n = dataset.size();
  const int64_t pad = options.crop ? options.pad : 0;
  const std::vector<float> lut_f = normalize_lut(dataset);
  std::vector<T> lut(lut_f.size());
  for (size_t i = 0; i < lut.size(); ++i) lut[i] = static_cast<T>(lut_f[i]);  // same rounding as Tensor::to
  const uint8_t* src = dataset.images.data_ptr<uint8_t>();
  const int64_t* src_labels = dataset.labels.data_ptr<int64_t>();

  for (int64_t b = 0; b < count; ++b) {
    const int64_t index = indices[b];
    if (index < 0 || index >= n)
      throw std::out_of_range("sample " + std::to_string(index) + " is outside the dataset of " +
                              std::to_string(n) + " samples");
    const int64_t label = src_labels[index];
    if (label < 0 || label >= dataset.num_classes)
      throw std::out_of_range("sample " + std::to_string(index) + ": label " + std::to_string(label) +
                              " is not in [0, " + std::to_string(dataset.num_classes) + ")");
    dst_labels[b] = label;
    sample_write<T, kChannelsLast>(src + index * C * H * W, dst + b * C * H * W, lut.data(), C, H, W, pad,
                                   augment_draw(options, seed, epoch, index));
  }
}

// In-memory samples through a user's pipeline: each [C, H, W] sample copied into the worker's interleaved
// image, its uint8 transforms run, the result (which must keep the dataset's C x H x W) written through the
// output stage. The built-in flags keep the fused pass above (one read, one write per value).
template <typename T, bool kChannelsLast>
void pipeline_batch_write(const Dataset& dataset, const int64_t* indices, int64_t count, const Pipeline& pipeline,
                          uint64_t seed, int64_t epoch, T* dst, int64_t* dst_labels) {
  const int64_t C = dataset.channels(), H = dataset.height(), W = dataset.width(), n = dataset.size();
  thread_local ImageU8 image;
  thread_local TransformScratch scratch;
  const std::vector<float> table_f = pipeline.value_table(C);
  std::vector<T> table(table_f.size());
  for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<T>(table_f[i]);
  const uint8_t* src = dataset.images.data_ptr<uint8_t>();
  const int64_t* src_labels = dataset.labels.data_ptr<int64_t>();
  for (int64_t b = 0; b < count; ++b) {
    const int64_t index = indices[b];
    if (index < 0 || index >= n)
      throw std::out_of_range("sample " + std::to_string(index) + " is outside the dataset of " + std::to_string(n) + " samples");
    dst_labels[b] = src_labels[index];
    image.reshape(H, W, C);
    const uint8_t* in = src + index * C * H * W;
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x)
        for (int64_t c = 0; c < C; ++c) image.row(y)[x * C + c] = in[(c * H + y) * W + x];
    pipeline.run_u8(image, seed, epoch, index, scratch);
    T* out = dst + b * C * H * W;
    if (pipeline.float_steps()) {
      const at::Tensor x = pipeline.run_float(image, nullptr, seed, epoch, index, scratch);
      if (x.size(0) != C || x.size(1) != H || x.size(2) != W)
        throw InputError("sample " + std::to_string(index) + ": the transform made a " + std::to_string(x.size(0)) +
                         " x " + std::to_string(x.size(1)) + " x " + std::to_string(x.size(2)) + " image (C x H x W) "
                         "from the data set's " + std::to_string(C) + " x " + std::to_string(H) + " x " +
                         std::to_string(W) + ": the batch holds the data set's size; crop or resize back to it");
      float_image_write(x, out, kChannelsLast ? 1 : H * W, kChannelsLast ? W * C : W, kChannelsLast ? C : 1);
      continue;
    }
    if (image.height != H || image.width != W || image.channels != C)
      throw InputError("sample " + std::to_string(index) + ": the transform made a " + std::to_string(image.channels) +
                       " x " + std::to_string(image.height) + " x " + std::to_string(image.width) + " image (C x H x W) "
                       "from the data set's " + std::to_string(C) + " x " + std::to_string(H) + " x " + std::to_string(W) +
                       ": the batch holds the data set's size; crop or resize back to it");
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x)
        for (int64_t c = 0; c < C; ++c) {
          const T v = table[static_cast<size_t>(c * 256 + image.row(y)[x * C + c])];
          if (kChannelsLast) {
            out[(y * W + x) * C + c] = v;
          } else {
            out[(c * H + y) * W + x] = v;
          }
        }
    pipeline.erase_output(out, C, H, W, kChannelsLast ? 1 : H * W, kChannelsLast ? W * C : W, kChannelsLast ? C : 1,
                          seed, epoch, index, [](T* at, float v) { *at = static_cast<T>(v); });
  }
}

template <typename T>
void batch_write_layout(bool channels_last, const Dataset& dataset, const int64_t* indices, int64_t count,
                        const AugmentOptions& options, uint64_t seed, int64_t epoch, at::Tensor& images,
                        at::Tensor& labels) {
  T* dst = images.data_ptr<T>();
  int64_t* dst_labels = labels.data_ptr<int64_t>();
  if (options.pipeline) {
    pipeline_check_output(*options.pipeline);
    if (channels_last) {
      pipeline_batch_write<T, true>(dataset, indices, count, *options.pipeline, seed, epoch, dst, dst_labels);
    } else {
      pipeline_batch_write<T, false>(dataset, indices, count, *options.pipeline, seed, epoch, dst, dst_labels);
    }
  } else if (channels_last) {
    batch_write<T, true>(dataset, indices, count, options, seed, epoch, dst, dst_labels);
  } else {
    batch_write<T, false>(dataset, indices, count, options, seed, epoch, dst, dst_labels);
  }
}

}  // namespace

int64_t batch_assemble(const Dataset& dataset, const int64_t* indices, int64_t count, const AugmentOptions& options,
                       uint64_t seed, int64_t epoch, at::Tensor& images, at::Tensor& labels) {
  TORCH_CHECK(images.dim() == 4 && images.size(0) == count && images.size(1) == dataset.channels() &&
                  images.size(2) == dataset.height() && images.size(3) == dataset.width(),
              "batch_assemble: images must be [", count, ", ", dataset.channels(), ", ", dataset.height(), ", ",
              dataset.width(), "], got ", images.sizes());
  TORCH_CHECK(labels.scalar_type() == at::kLong && labels.numel() == count && labels.is_contiguous(),
              "batch_assemble: labels must be contiguous int64 [", count, "]");
  TORCH_CHECK(options.pad >= 0, "batch_assemble: pad must be >= 0, got ", options.pad);
  // A tensor contiguous in both formats (size-1 dims) has one memory layout, so either path is right.
  const bool nchw = images.is_contiguous();
  TORCH_CHECK(nchw || images.is_contiguous(at::MemoryFormat::ChannelsLast),
              "batch_assemble: images must be contiguous (NCHW) or channels_last, got strides ", images.strides());
  int64_t skipped = 0;
  if (dataset.encoded) {
    skipped = encoded_batch_assemble(dataset, indices, count, options, seed, epoch, images, labels);
  } else if (images.scalar_type() == at::kFloat) {
    batch_write_layout<float>(!nchw, dataset, indices, count, options, seed, epoch, images, labels);
  } else if (images.scalar_type() == at::kHalf) {
    batch_write_layout<at::Half>(!nchw, dataset, indices, count, options, seed, epoch, images, labels);
  } else if (images.scalar_type() == at::kBFloat16) {
    batch_write_layout<at::BFloat16>(!nchw, dataset, indices, count, options, seed, epoch, images, labels);
  } else {
    TORCH_CHECK(false, "batch_assemble: images must be float32, float16 or bfloat16, got ", images.scalar_type());
  }
  if (!dataset.encoded && !options.pipeline)  // a pipeline (and the encoded default) erases in its output stage
    random_erasing_apply(images, indices, count, options.erase, seed, epoch);
  return skipped;
}

// Encoded samples go to image_augment.h's one-decode assembly; samples held in memory, which have nothing to
// decode, through batch_assemble() once per view.
AssembleCounts batch_views_assemble(const Dataset& dataset, const int64_t* indices, int64_t count,
                                    const AugmentOptions& options, const std::vector<ViewTarget>& views,
                                    uint64_t seed, int64_t epoch, at::Tensor& labels) {
  TORCH_CHECK(!views.empty(), "batch_views_assemble: no views to fill");
  if (dataset.encoded) return encoded_views_assemble(dataset, indices, count, options, views, seed, epoch, labels);
  for (size_t v = 0; v < views.size(); ++v) {
    AugmentOptions view_options = options;
    if (views[v].pipeline) view_options.pipeline = views[v].pipeline;
    at::Tensor images = views[v].images;
    batch_assemble(dataset, indices, count, view_options, view_target_seed(views[v], seed, static_cast<int64_t>(v)), epoch, images,
                   labels);
  }
  return {};
}

} // namespace fastloop
