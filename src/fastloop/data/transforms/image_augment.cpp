// Encoded-image batch assembly through the loader's transform pipeline (pipeline.h): each sample decoded and
// through its uint8 transforms (image_sample.h: only the region a leading crop or resize reads), and the result
// written through the output stage's value table into the batch. Random draws come from (seed, epoch, index),
// so any number of loader workers makes the same batches. Several views (views.h) share one decode of each
// sample (fast_decode: at the finest scale any of them needs), and each runs its own pipeline on it; a sample of
// several images (EncodedImages::parts: image fields) has view v decode part v for itself.
#include "fastloop/data/transforms/image_augment.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/transforms/draws.h"
#include "fastloop/data/transforms/float_ops.h"
#include "fastloop/data/transforms/image_sample.h"
#include "fastloop/data/transforms/lut_planes.h"
#include "fastloop/data/transforms/pipeline.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace fastloop {
namespace {

constexpr int64_t kSkipTries = 16;  // bad images in a row that --bad-image-policy skip steps over

// One sample's H x W x C uint8 image through the value table into its batch slot (NCHW or NHWC).
template <typename T, bool kChannelsLast>
void sample_write(const ImageU8& image, const T* table, T* out) {
  const int64_t C = image.channels, H = image.height, W = image.width;
  for (int64_t y = 0; y < H; ++y) {
    const uint8_t* px = image.row(y);
    if (kChannelsLast) {
      T* o = out + y * W * C;
      for (int64_t x = 0; x < W * C; x += C)
        for (int64_t c = 0; c < C; ++c) o[x + c] = table[c * 256 + px[x + c]];
    } else if (C == 3) {
      T* r = out + y * W;
      T* g = r + H * W;
      T* b = g + H * W;
      if constexpr (std::is_same_v<T, float>) {
        lut_planes_row(px, W, table, r, g, b);  // AVX2 gathers where the CPU has them
      } else {
        const T* table_g = table + 256;
        const T* table_b = table + 512;
        for (int64_t x = 0; x < W; ++x, px += 3) r[x] = table[px[0]], g[x] = table_g[px[1]], b[x] = table_b[px[2]];
      }
    } else {
      for (int64_t c = 0; c < C; ++c) {
        T* o = out + c * H * W + y * W;
        for (int64_t x = 0; x < W; ++x) o[x] = table[c * 256 + px[x * C + c]];
      }
    }
  }
}

// One view of encoded_views_write: its pipeline and seed, its output stage's value table in T, its batch.
template <typename T>
struct ViewOut {
  const Pipeline* pipeline = nullptr;
  uint64_t seed = 0;
  std::vector<T> lut;
  T* dst = nullptr;
  int64_t height = 0, width = 0;  // pixels
  int64_t plane() const { return 3 * height * width; }
};


template <typename T>
SharedDecode views_decode(const Dataset& dataset, int64_t index, const std::vector<ViewOut<T>>& views, int64_t epoch,
                          bool fast, ImageWork& work) {
  const std::string_view bytes = dataset.encoded->bytes(index, work.file);
  work.parts_taken = 1;
  const std::string name = dataset.encoded->name(index);
  SharedDecode decoded;
  decoded.info = work.decoder.info(bytes, name);
  decoded.scale = {1, 8};
  for (const ViewOut<T>& view : views) {
    FusedHead head;
    const ImageScale scale = fused_head(*view.pipeline, decoded.info, view.seed, epoch, index, head)
                                 ? fused_scale(decoded.info, head.plan, fast) : ImageScale{};
    if (scale.num * decoded.scale.denom > decoded.scale.num * scale.denom) decoded.scale = scale;  // finer
  }
  ++work.decodes;
  decoded.image = work.decoder.decode(bytes, name, decoded.info, decoded.scale);
  return decoded;
}

// work.image, sample `index`'s image of `view`, into row b of the view's batch, then its output erasing.
// The error of an image whose size is not the batch's.
void check_view_size(const Dataset& dataset, int64_t index, int64_t channels, int64_t height, int64_t width,
                     int64_t H, int64_t W) {
  if (height != H || width != W || channels != 3)
    throw InputError(dataset.encoded->name(index) + ": the transform made a " + std::to_string(channels) + " x " +
                     std::to_string(height) + " x " + std::to_string(width) + " image (C x H x W), but the "
                     "batch holds 3 x " + std::to_string(H) + " x " + std::to_string(W) + " (the image size given, "
                     "or, for a transform whose size follows each image's, the first image's): end the transform "
                     "with a crop or resize to a size (e.g. CenterCrop(" + std::to_string(H) + ")), which the batches "
                     "then take, and 3 channels");
}

template <typename T, bool kChannelsLast>
void view_write(const Dataset& dataset, int64_t index, const ViewOut<T>& view, int64_t epoch, int64_t b,
                ImageWork& work) {
  const ImageU8& image = work.image;
  const int64_t H = view.height, W = view.width;
  T* out = view.dst + b * view.plane();
  if (view.pipeline->float_steps()) {  // operations on the float image after the conversion
    const at::Tensor x = view.pipeline->run_float(image, nullptr, view.seed, epoch, index, work.scratch);
    check_view_size(dataset, index, x.size(0), x.size(1), x.size(2), H, W);
    float_image_write(x, out, kChannelsLast ? 1 : H * W, kChannelsLast ? W * 3 : W, kChannelsLast ? 3 : 1);
    return;
  }
  check_view_size(dataset, index, image.channels, image.height, image.width, H, W);
  sample_write<T, kChannelsLast>(image, view.lut.data(), out);
  view.pipeline->erase_output(out, 3, H, W, kChannelsLast ? 1 : H * W, kChannelsLast ? W * 3 : W, kChannelsLast ? 3 : 1,
                              view.seed, epoch, index, [](T* at, float v) { *at = static_cast<T>(v); });
}

// Sample `index` into row b of every view's batch: one view decodes for itself, several share one decode; with
// several image parts (EncodedImages::parts), view v decodes part v for itself.
template <typename T, bool kChannelsLast>
void sample_views_write(const Dataset& dataset, int64_t index, const std::vector<ViewOut<T>>& views, int64_t epoch,
                        int64_t b, bool fast, ImageWork& work, bool parts) {
  if (views.size() == 1 || parts) {
    for (size_t v = 0; v < views.size(); ++v) {
      sample_image(dataset, index, *views[v].pipeline, views[v].seed, epoch, fast, work, static_cast<int64_t>(v));
      view_write<T, kChannelsLast>(dataset, index, views[v], epoch, b, work);
    }
    return;
  }
  const SharedDecode decoded = views_decode(dataset, index, views, epoch, fast, work);
  for (const ViewOut<T>& view : views) {
    view_image(decoded, *view.pipeline, view.seed, epoch, index, work);
    view_write<T, kChannelsLast>(dataset, index, view, epoch, b, work);
  }
}

template <typename T, bool kChannelsLast>
AssembleCounts encoded_views_write(const Dataset& dataset, const int64_t* indices, int64_t count,
                                   const std::vector<ViewOut<T>>& views, int64_t epoch, bool fast,
                                   int64_t* dst_labels) {
  const int64_t n = dataset.size();
  const bool parts = dataset.encoded->parts() > 1;
  ImageWork& work = image_work();
  const int64_t decodes_before = work.decodes;
  AssembleCounts counts;
  for (int64_t b = 0; b < count; ++b) {
    int64_t index = indices[b];
    if (index < 0 || index >= n)
      throw std::out_of_range("sample " + std::to_string(index) + " is outside the dataset of " + std::to_string(n) + " samples");
    for (int64_t attempt = 0;; ++attempt) {
      try {
        work.parts_taken = 0;
        sample_views_write<T, kChannelsLast>(dataset, index, views, epoch, b, fast, work, parts);
        break;
      } catch (const InputError&) {
        dataset.encoded->read_dropped(index, work.parts_taken);  // what the source kept of it goes
        if (dataset.mark_bad_images) {  // its row stays, zeros, labelled -1 for the caller to report
          for (const ViewOut<T>& view : views)
            std::fill(view.dst + b * view.plane(), view.dst + (b + 1) * view.plane(), T(0));
          ++counts.skipped;
          index = -1;
          break;
        }
        if (!dataset.skip_bad_images) throw;
        if (++counts.skipped, attempt + 1 >= kSkipTries)
          throw InputError("--bad-image-policy skip: " + std::to_string(kSkipTries) + " images in a row from " +
                           dataset.encoded->name(indices[b]) + " on could not be decoded; check the data set");
        index = (index + 1) % n;  // the next sample stands in, deterministically
      }
    }
    if (index < 0) {
      dst_labels[b] = -1;
      continue;
    }
    const int64_t label = dataset.encoded->label(index);
    if (label < 0 || label >= dataset.num_classes)
      throw std::out_of_range("sample " + std::to_string(index) + ": label " + std::to_string(label) +
                              " is not in [0, " + std::to_string(dataset.num_classes) + ")");
    dst_labels[b] = label;
  }
  counts.decoded = work.decodes - decodes_before;
  return counts;
}

template <typename T>
AssembleCounts encoded_views_write_layout(bool channels_last, const Dataset& dataset, const int64_t* indices,
                                          int64_t count, const AugmentOptions& options,
                                          const std::vector<ViewTarget>& targets, uint64_t seed, int64_t epoch,
                                          at::Tensor& labels) {
  ImageWork& work = image_work();
  std::vector<ViewOut<T>> views(targets.size());
  for (size_t v = 0; v < targets.size(); ++v) {
    ViewOut<T>& view = views[v];
    view.pipeline = targets[v].pipeline ? targets[v].pipeline.get() : &work.pipeline.of(dataset, options);
    pipeline_check_output(*view.pipeline);
    view.seed = view_target_seed(targets[v], seed, static_cast<int64_t>(v));
    for (const float value : view.pipeline->value_table(3)) view.lut.push_back(static_cast<T>(value));  // Tensor::to's rounding
    view.dst = targets[v].images.data_ptr<T>();
    view.height = targets[v].images.size(2), view.width = targets[v].images.size(3);
  }
  int64_t* dst_labels = labels.data_ptr<int64_t>();
  const bool fast = options.fast_decode;
  return channels_last ? encoded_views_write<T, true>(dataset, indices, count, views, epoch, fast, dst_labels)
                       : encoded_views_write<T, false>(dataset, indices, count, views, epoch, fast, dst_labels);
}

}  // namespace

void pipeline_check_output(const Pipeline& pipeline) {
  if (!pipeline.float_output())
    throw TransformTypeError("the transform " + pipeline.repr() + " ends with uint8 images; fastloop's batches are float: "
                             "end it with ToDtype(torch.float32, scale=True) or ToTensor() (and Normalize)");
}

void resized_crop(const RgbImage& image, const CropBox& box, int64_t out_height, int64_t out_width, at::Tensor& out) {
  TORCH_CHECK(box.top >= 0 && box.left >= 0 && box.height >= 1 && box.width >= 1 && box.top + box.height <= image.height &&
                  box.left + box.width <= image.width,
              "resized_crop: box (", box.top, ", ", box.left, ", ", box.height, ", ", box.width, ") outside a ",
              image.height, "x", image.width, " image");
  if (!out.defined() || out.size(2) != out_height || out.size(3) != out_width ||
      !out.is_contiguous(at::MemoryFormat::ChannelsLast)) {
    out = at::empty({1, 3, out_height, out_width}, at::TensorOptions(at::kByte).memory_format(at::MemoryFormat::ChannelsLast));
  }
  const RgbImage whole{image.data, image.width, image.height, 0, 0};
  image_work().resizer.resize(whole, box, out_height, out_width, {0, 0, out_height, out_width}, out.data_ptr<uint8_t>(),
                              out_width * 3);
}

int64_t encoded_decode_only(const Dataset& dataset, std::string_view bytes, int64_t index, const AugmentOptions& options,
                            uint64_t seed, int64_t epoch) {
  ImageWork& work = image_work();
  const Pipeline& pipeline = work.pipeline.of(dataset, options);
  const std::string name = dataset.encoded->name(index);
  const ImageInfo info = work.decoder.info(bytes, name);
  const DecodePlan d = decode_plan(info, pipeline, seed, epoch, index, options.fast_decode, work.resizer);
  const RgbImage image = d.fused ? work.decoder.decode_region(bytes, name, info, d.scale, d.needed)
                                 : work.decoder.decode(bytes, name, info, ImageScale{});
  return image.height * image.width;
}

int64_t encoded_batch_assemble(const Dataset& dataset, const int64_t* indices, int64_t count,
                               const AugmentOptions& options, uint64_t seed, int64_t epoch, at::Tensor& images,
                               at::Tensor& labels) {
  return encoded_views_assemble(dataset, indices, count, options, {ViewTarget{nullptr, images}}, seed, epoch, labels)
      .skipped;
}

AssembleCounts encoded_views_assemble(const Dataset& dataset, const int64_t* indices, int64_t count,
                                      const AugmentOptions& options, const std::vector<ViewTarget>& views,
                                      uint64_t seed, int64_t epoch, at::Tensor& labels) {
  TORCH_CHECK(dataset.encoded && dataset.image_height > 0 && dataset.image_width > 0, "encoded_views_assemble: the dataset is not encoded");
  TORCH_CHECK(!views.empty(), "encoded_views_assemble: no views to fill");
  const int64_t parts = dataset.encoded->parts();
  TORCH_CHECK(parts == 1 || static_cast<int64_t>(views.size()) == parts, "encoded_views_assemble: ", parts,
              " images per sample (image fields) need one view each, got ", views.size(), " views");
  TORCH_CHECK(labels.scalar_type() == at::kLong && labels.numel() == count && labels.is_contiguous(),
              "encoded_views_assemble: labels must be contiguous int64 [", count, "]");
  const at::Tensor& first = views[0].images;
  const bool nchw = first.is_contiguous();
  for (const ViewTarget& view : views)
    TORCH_CHECK(view.images.dim() == 4 && view.images.size(0) == count && view.images.size(1) == 3 &&
                    view.images.scalar_type() == first.scalar_type() &&
                    (nchw ? view.images.is_contiguous() : view.images.is_contiguous(at::MemoryFormat::ChannelsLast)),
                "encoded_views_assemble: every view's images must be [", count, ", 3, H, W] of one dtype and memory "
                "format, got ", view.images.sizes(), " ", view.images.scalar_type(), " beside ", first.sizes(), " ",
                first.scalar_type());
  switch (first.scalar_type()) {
    case at::kFloat:
      return encoded_views_write_layout<float>(!nchw, dataset, indices, count, options, views, seed, epoch, labels);
    case at::kHalf:
      return encoded_views_write_layout<at::Half>(!nchw, dataset, indices, count, options, views, seed, epoch, labels);
    case at::kBFloat16:
      return encoded_views_write_layout<at::BFloat16>(!nchw, dataset, indices, count, options, views, seed, epoch, labels);
    default:
      TORCH_CHECK(false, "encoded_views_assemble: images must be float32, float16 or bfloat16, got ", first.scalar_type());
  }
}

} // namespace fastloop
