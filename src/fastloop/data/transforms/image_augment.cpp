// Encoded-image batch assembly. The geometry follows torchvision v2 line by line (RandomResizedCrop's
// make_params, _compute_resized_output_size, center_crop's anchor), Python's round() included (ties to
// even: std::nearbyint). Random draws come from (seed, epoch, index), so any number of loader workers
// makes the same batches. Each worker thread keeps its decoder, resizer, file buffer and crop across
// samples (thread_local: once grown, the hot path allocates nothing but the sample's file name).
#include "fastloop/data/transforms/image_augment.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/transforms/draws.h"
#include "fastloop/data/transforms/image_resize.h"
#include "fastloop/data/loader/sampler.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace fastloop {
namespace {

constexpr double kScaleMin = 0.08, kScaleMax = 1.0;           // of the image's area
constexpr double kRatioMin = 3.0 / 4.0, kRatioMax = 4.0 / 3.0;  // width / height
constexpr int kCropTries = 10;
constexpr int64_t kSkipTries = 16;  // bad images in a row that --bad-image-policy skip steps over
constexpr uint64_t kCropSalt = 0xc20b, kFlipSalt = 0xf11b;

struct ImageWork {
  ImageDecoder decoder;
  ImageResizer resizer;
  std::string file;             // the encoded bytes of the current sample
  std::vector<uint8_t> pixels;  // the sample's S x S x 3 RGB crop, resized
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

// One sample's S x S RGB rows, flipped or not, through the table into its batch slot (NCHW or NHWC).
template <typename T, bool kChannelsLast>
void sample_write(const uint8_t* rgb, int64_t S, bool flip, const T* lut, T* out) {
  const T* lut_r = lut;
  const T* lut_g = lut + 256;
  const T* lut_b = lut + 512;
  const int64_t step = flip ? -3 : 3;  // bytes from one written pixel's source to the next's
  for (int64_t y = 0; y < S; ++y) {
    const uint8_t* px = rgb + y * S * 3 + (flip ? (S - 1) * 3 : 0);
    if (kChannelsLast) {
      T* o = out + y * S * 3;
      for (int64_t x = 0; x < S; ++x, px += step, o += 3) o[0] = lut_r[px[0]], o[1] = lut_g[px[1]], o[2] = lut_b[px[2]];
    } else {
      T* r = out + y * S;
      T* g = r + S * S;
      T* b = g + S * S;
      for (int64_t x = 0; x < S; ++x, px += step) r[x] = lut_r[px[0]], g[x] = lut_g[px[1]], b[x] = lut_b[px[2]];
    }
  }
}

// Decodes, crops and resizes sample `index` into work.pixels (S x S x 3); returns whether to flip it. Only
// the pixels the resize reads are decoded (libjpeg's crop and skip): the training box, and for eval the
// part of the image under the centre crop, whose resize is computed for the whole image's geometry.
bool sample_pixels(const Dataset& dataset, int64_t index, const AugmentOptions& options, uint64_t seed,
                   int64_t epoch, ImageWork& work) {
  const int64_t S = dataset.image_size;
  const std::string_view bytes = dataset.encoded->bytes(index, work.file);
  const std::string name = dataset.encoded->name(index);
  const ImageInfo info = work.decoder.info(bytes, name);
  const bool flip = flip_decide(options, epoch, [&](int64_t e) { return random_flip(seed, e, index); });
  work.pixels.resize(static_cast<size_t>(S * S * 3));
  const PixelRect all_out{0, 0, S, S};
  if (options.crop) {
    const CropBox box = random_resized_crop_box(info.height, info.width, seed, epoch, index);
    ImageScale scale;  // formats other than JPEG decode at full scale
    if (info.format == ImageFormat::kJpeg)
      scale = image_scale_at_least(std::max(static_cast<double>(S) / box.height, static_cast<double>(S) / box.width));
    const CropBox want = box_scaled(box, info.height, info.width, scale.apply(info.height), scale.apply(info.width));
    const RgbImage part = work.decoder.decode_region(bytes, name, info, scale, want);  // at least the box's pixels
    work.resizer.resize(part, want, S, S, all_out, work.pixels.data(), S * 3);
    return flip;
  }
  const EvalGeometry geometry = eval_geometry(info.height, info.width, S);
  const ImageScale scale = image_scale_at_least(std::max(static_cast<double>(geometry.resized_height) / info.height,
                                                         static_cast<double>(geometry.resized_width) / info.width));
  const PixelRect whole{0, 0, scale.apply(info.height), scale.apply(info.width)};
  const PixelRect needed = work.resizer.source_rect(whole, geometry.resized_height, geometry.resized_width, geometry.crop);
  const RgbImage part = work.decoder.decode_region(bytes, name, info, scale, needed);
  work.resizer.resize(part, whole, geometry.resized_height, geometry.resized_width, geometry.crop, work.pixels.data(), S * 3);
  return flip;
}

template <typename T, bool kChannelsLast>
int64_t encoded_batch_write(const Dataset& dataset, const int64_t* indices, int64_t count, const AugmentOptions& options,
                    uint64_t seed, int64_t epoch, T* dst, int64_t* dst_labels) {
  const int64_t n = dataset.size(), plane = 3 * dataset.image_size * dataset.image_size;
  const std::vector<float> lut_f = normalize_lut(dataset);
  std::vector<T> lut(lut_f.size());
  for (size_t i = 0; i < lut.size(); ++i) lut[i] = static_cast<T>(lut_f[i]);
  ImageWork& work = image_work();
  int64_t skipped = 0;
  for (int64_t b = 0; b < count; ++b) {
    int64_t index = indices[b];
    if (index < 0 || index >= n)
      throw std::out_of_range("sample " + std::to_string(index) + " is outside the dataset of " + std::to_string(n) + " samples");
    for (int64_t attempt = 0;; ++attempt) {
      try {
        const bool flip = sample_pixels(dataset, index, options, seed, epoch, work);
        sample_write<T, kChannelsLast>(work.pixels.data(), dataset.image_size, flip, lut.data(), dst + b * plane);
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
  Draws draws(hash_mix(seed ^ kCropSalt, static_cast<uint64_t>(epoch), static_cast<uint64_t>(index)));
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
  return hash_mix(seed ^ kFlipSalt, static_cast<uint64_t>(epoch), static_cast<uint64_t>(index)) >> 63;
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
  TORCH_CHECK(dataset.encoded && dataset.image_size > 0, "encoded_batch_assemble: the dataset is not encoded");
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
