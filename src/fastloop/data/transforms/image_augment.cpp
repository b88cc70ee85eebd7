// Encoded-image batch assembly through the loader's transform pipeline (pipeline.h): each sample decoded
// (only the region a leading crop or resize reads, at the smallest JPEG DCT scale that covers it), its uint8
// transforms run, and the result written through the output stage's value table into the batch. Random
// draws come from (seed, epoch, index), so any number of loader workers makes the same batches. Each worker
// thread keeps its decoder, resizer, file buffer, image and scratch across samples (thread_local: once grown,
// the hot path allocates nothing but the sample's file name).
#include "fastloop/data/transforms/image_augment.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/transforms/draws.h"
#include "fastloop/data/transforms/image_resize.h"
#include "fastloop/data/transforms/pipeline.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace fastloop {
namespace {

constexpr double kScaleMin = 0.08, kScaleMax = 1.0;           // of the image's area
constexpr double kRatioMin = 3.0 / 4.0, kRatioMax = 4.0 / 3.0;  // width / height
constexpr int kCropTries = 10;
constexpr int64_t kSkipTries = 16;  // bad images in a row that --bad-image-policy skip steps over

struct ImageWork {
  ImageDecoder decoder;
  ImageResizer resizer;
  std::string file;             // the encoded bytes of the current sample
  ImageU8 image;                // the sample through the pipeline's uint8 transforms
  TransformScratch scratch;
  std::string default_spec;     // the pipeline made from the AugmentOptions flags, for this thread
  std::shared_ptr<const Pipeline> default_pipeline;
};

ImageWork& image_work() {
  thread_local ImageWork work;
  return work;
}

// `box` of a full-scale height x width image, in the pixels of its decode at decoded_h x decoded_w.
CropBox box_scaled(const CropBox& box, int64_t height, int64_t width, int64_t decoded_h, int64_t decoded_w) {
  if (decoded_h == height && decoded_w == width) return box;
  const double fy = static_cast<double>(decoded_h) / height, fx = static_cast<double>(decoded_w) / width;
  CropBox out;
  out.top = std::min<int64_t>(decoded_h - 1, py_round(box.top * fy));
  out.left = std::min<int64_t>(decoded_w - 1, py_round(box.left * fx));
  out.height = std::clamp<int64_t>(py_round((box.top + box.height) * fy) - out.top, 1, decoded_h - out.top);
  out.width = std::clamp<int64_t>(py_round((box.left + box.width) * fx) - out.left, 1, decoded_w - out.left);
  return out;
}

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
      const T* table_g = table + 256;
      const T* table_b = table + 512;
      for (int64_t x = 0; x < W; ++x, px += 3) r[x] = table[px[0]], g[x] = table_g[px[1]], b[x] = table_b[px[2]];
    } else {
      for (int64_t c = 0; c < C; ++c) {
        T* o = out + c * H * W + y * W;
        for (int64_t x = 0; x < W; ++x) o[x] = table[c * 256 + px[x * C + c]];
      }
    }
  }
}

// The plan's box decoded at the smallest JPEG scale that covers its resize (other formats at full scale),
// only the part the resize reads for `window` of its output, resized into work.image.
void fused_decode(std::string_view bytes, const std::string& name, const ImageInfo& info, const ResizePlan& plan,
                  const PixelRect& window, ImageWork& work) {
  const CropBox box{plan.top, plan.left, plan.height, plan.width};
  ImageScale scale;
  if (info.format == ImageFormat::kJpeg)
    scale = image_scale_at_least(std::max(static_cast<double>(plan.out_height) / box.height,
                                          static_cast<double>(plan.out_width) / box.width));
  const CropBox want = box_scaled(box, info.height, info.width, scale.apply(info.height), scale.apply(info.width));
  const bool whole = window.top == 0 && window.left == 0 && window.height == plan.out_height && window.width == plan.out_width;
  const PixelRect needed = whole ? want : work.resizer.source_rect(want, plan.out_height, plan.out_width, window);
  const RgbImage part = work.decoder.decode_region(bytes, name, info, scale, needed);
  work.image.reshape(window.height, window.width, 3);
  work.resizer.resize(part, want, plan.out_height, plan.out_width, window, work.image.data(), window.width * 3);
}

// Sample `index` through the pipeline's uint8 transforms into work.image. A leading crop or resize (bilinear,
// antialiased: the resizer's kernel) is fused into the decode, with a CenterCrop after a Resize (eval's
// Resize + CenterCrop) as the window of its output to compute; anything else decodes the whole image.
void sample_image(const Dataset& dataset, int64_t index, const Pipeline& pipeline, uint64_t seed, int64_t epoch,
                  ImageWork& work) {
  const std::string_view bytes = dataset.encoded->bytes(index, work.file);
  const std::string name = dataset.encoded->name(index);
  const ImageInfo info = work.decoder.info(bytes, name);
  if (const ResizePlanTransform* head = pipeline.head()) {
    Draws draws = pipeline_draws(seed, epoch, index, 0);
    const ResizePlan plan = head->plan(info.height, info.width, draws);
    if (plan.exact && plan.interpolation == Interpolation::kBilinear && plan.antialias) {
      PixelRect window{0, 0, plan.out_height, plan.out_width};
      size_t next = 1;
      if (const ResizePlanTransform* crop = pipeline.head_crop()) {
        Draws crop_draws = pipeline_draws(seed, epoch, index, 1);
        const ResizePlan c = crop->plan(plan.out_height, plan.out_width, crop_draws);
        if (c.exact && c.height == c.out_height && c.width == c.out_width) window = {c.top, c.left, c.height, c.width}, next = 2;
      }
      fused_decode(bytes, name, info, plan, window, work);
      pipeline.run_u8(work.image, seed, epoch, index, work.scratch, next);
      return;
    }
  }
  const RgbImage whole = work.decoder.decode(bytes, name, info, ImageScale{});
  work.image.reshape(whole.height, whole.width, 3);
  std::memcpy(work.image.data(), whole.data, static_cast<size_t>(work.image.bytes()));
  pipeline.run_u8(work.image, seed, epoch, index, work.scratch, 0);
}

// The pipeline of these options: theirs, or (per thread, made once) the default from the built-in flags.
const Pipeline& pipeline_of(const Dataset& dataset, const AugmentOptions& options, ImageWork& work) {
  if (options.pipeline) return *options.pipeline;
  const std::string spec = transform_spec_default(dataset, options);
  if (!work.default_pipeline || work.default_spec != spec) {
    work.default_pipeline = std::make_shared<const Pipeline>(spec);
    work.default_spec = spec;
  }
  return *work.default_pipeline;
}

template <typename T, bool kChannelsLast>
int64_t encoded_batch_write(const Dataset& dataset, const int64_t* indices, int64_t count, const AugmentOptions& options,
                    uint64_t seed, int64_t epoch, T* dst, int64_t* dst_labels) {
  const int64_t n = dataset.size(), H = dataset.image_height, W = dataset.image_width, plane = 3 * H * W;
  ImageWork& work = image_work();
  const Pipeline& pipeline = pipeline_of(dataset, options, work);
  pipeline_check_output(pipeline);
  const std::vector<float> lut_f = pipeline.value_table(3);
  std::vector<T> lut(lut_f.size());
  for (size_t i = 0; i < lut.size(); ++i) lut[i] = static_cast<T>(lut_f[i]);  // same rounding as Tensor::to
  int64_t skipped = 0;
  for (int64_t b = 0; b < count; ++b) {
    int64_t index = indices[b];
    if (index < 0 || index >= n)
      throw std::out_of_range("sample " + std::to_string(index) + " is outside the dataset of " + std::to_string(n) + " samples");
    for (int64_t attempt = 0;; ++attempt) {
      try {
        sample_image(dataset, index, pipeline, seed, epoch, work);
        const ImageU8& image = work.image;
        if (image.height != H || image.width != W || image.channels != 3)
          throw InputError(dataset.encoded->name(index) + ": the transform made a " + std::to_string(image.channels) +
                           " x " + std::to_string(image.height) + " x " + std::to_string(image.width) +
                           " image (C x H x W), but the batch holds 3 x " + std::to_string(H) + " x " + std::to_string(W) +
                           " (the image size given): end the transform with a crop or resize to a size (e.g. CenterCrop(" +
                           std::to_string(H) + ")), which the batches then take, and 3 channels");
        sample_write<T, kChannelsLast>(image, lut.data(), dst + b * plane);
        pipeline.erase_output(dst + b * plane, 3, H, W, kChannelsLast ? 1 : H * W, kChannelsLast ? W * 3 : W,
                              kChannelsLast ? 3 : 1, seed, epoch, index, [](T* at, float v) { *at = static_cast<T>(v); });
        break;
      } catch (const InputError&) {
        if (dataset.mark_bad_images) {  // its row stays, zeros, labelled -1 for the caller to report
          std::fill(dst + b * plane, dst + (b + 1) * plane, T(0));
          ++skipped;
          index = -1;
          break;
        }
        if (!dataset.skip_bad_images) throw;
        if (++skipped, attempt + 1 >= kSkipTries)
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
  return skipped;
}

template <typename T>
int64_t encoded_batch_write_layout(bool channels_last, const Dataset& dataset, const int64_t* indices, int64_t count,
                           const AugmentOptions& options, uint64_t seed, int64_t epoch, at::Tensor& images,
                           at::Tensor& labels) {
  T* dst = images.data_ptr<T>();
  int64_t* dst_labels = labels.data_ptr<int64_t>();
  return channels_last ? encoded_batch_write<T, true>(dataset, indices, count, options, seed, epoch, dst, dst_labels)
                       : encoded_batch_write<T, false>(dataset, indices, count, options, seed, epoch, dst, dst_labels);
}

}  // namespace

CropBox random_resized_crop_box(int64_t height, int64_t width, uint64_t seed, int64_t epoch, int64_t index) {
  Draws draws = pipeline_draws(seed, epoch, index, 0);
  const double area = static_cast<double>(height * width);
  for (int t = 0; t < kCropTries; ++t) {
    const auto [w, h] = box_sides_draw(draws, area, kScaleMin, kScaleMax, kRatioMin, kRatioMax);
    if (0 < w && w <= width && 0 < h && h <= height) {
      const int64_t top = draws.below(height - h + 1);
      return {top, draws.below(width - w + 1), h, w};
    }
  }
  const double in_ratio = static_cast<double>(width) / static_cast<double>(height);  // fallback: central crop
  int64_t w = width, h = height;
  if (in_ratio < kRatioMin) {
    h = py_round(static_cast<double>(w) / kRatioMin);
  } else if (in_ratio > kRatioMax) {
    w = py_round(static_cast<double>(h) * kRatioMax);
  }
  return {(height - h) / 2, (width - w) / 2, h, w};
}

bool random_flip(uint64_t seed, int64_t epoch, int64_t index) {
  return pipeline_draws(seed, epoch, index, 1).uniform(0.0, 1.0) < 0.5;  // RandomHorizontalFlip at position 1
}

std::string transform_spec_default(const Dataset& dataset, const AugmentOptions& options) {
  const int64_t S = dataset.image_height;  // the built-in transforms make squares
  std::string spec = options.crop ? "RandomResizedCrop(" + std::to_string(S) + ")"
                                  : "Resize(" + std::to_string(S * 256 / 224) + "), CenterCrop(" + std::to_string(S) + ")";
  if (options.flip) spec += ", RandomHorizontalFlip()";
  auto floats = [](const std::vector<float>& values) {  // float32's shortest digits: 0.485, not 0.48500001...
    std::string out = "(";
    for (size_t i = 0; i < values.size(); ++i) {
      char digits[32];
      const auto end = std::to_chars(digits, digits + sizeof(digits), values[i]).ptr;
      std::string text(digits, end);
      if (text.find_first_of(".en") == std::string::npos) text += ".0";
      out += (i ? ", " : "") + text;
    }
    return out + (values.size() == 1 ? ",)" : ")");
  };
  spec += ", ToTensor()";
  if (!dataset.mean.empty()) spec += ", Normalize(mean=" + floats(dataset.mean) + ", std=" + floats(dataset.stddev) + ")";
  if (options.erase > 0.0) spec += ", RandomErasing(p=" + float_repr(options.erase) + ")";
  return spec;
}

void pipeline_check_output(const Pipeline& pipeline) {
  if (!pipeline.float_output())
    throw TransformTypeError("the transform " + pipeline.repr() + " ends with uint8 images; fastloop's batches are float: "
                             "end it with ToDtype(torch.float32, scale=True) or ToTensor() (and Normalize)");
}

EvalGeometry eval_geometry(int64_t height, int64_t width, int64_t size) {
  const int64_t resize = size * 256 / 224;  // shorter side; 256 for 224
  const int64_t shorter = std::min(height, width), longer = std::max(height, width);
  const auto new_long = static_cast<int64_t>(static_cast<double>(resize) * static_cast<double>(longer) / static_cast<double>(shorter));
  EvalGeometry g;
  g.resized_height = width <= height ? new_long : resize;
  g.resized_width = width <= height ? resize : new_long;
  g.crop = {py_round((g.resized_height - size) / 2.0), py_round((g.resized_width - size) / 2.0), size, size};
  return g;
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

int64_t encoded_batch_assemble(const Dataset& dataset, const int64_t* indices, int64_t count,
                               const AugmentOptions& options, uint64_t seed, int64_t epoch, at::Tensor& images,
                               at::Tensor& labels) {
  TORCH_CHECK(dataset.encoded && dataset.image_height > 0 && dataset.image_width > 0, "encoded_batch_assemble: the dataset is not encoded");
  const bool nchw = images.is_contiguous();
  switch (images.scalar_type()) {
    case at::kFloat:
      return encoded_batch_write_layout<float>(!nchw, dataset, indices, count, options, seed, epoch, images, labels);
    case at::kHalf:
      return encoded_batch_write_layout<at::Half>(!nchw, dataset, indices, count, options, seed, epoch, images, labels);
    case at::kBFloat16:
      return encoded_batch_write_layout<at::BFloat16>(!nchw, dataset, indices, count, options, seed, epoch, images, labels);
    default:
      TORCH_CHECK(false, "encoded_batch_assemble: images must be float32, float16 or bfloat16, got ", images.scalar_type());
  }
}

} // namespace fastloop
