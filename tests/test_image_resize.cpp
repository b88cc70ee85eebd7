// The hand-written uint8 resize (data/transforms/image_resize), AVX2 and portable kernels, against ATen's kernel in this
// process, bit for bit: downscales up to 8x, upscales, unchanged sides, 1-pixel sides; a window equals the whole
// resize cropped; and the encoded batch paths (train crop, eval Resize + CenterCrop from a region decode)
// equal a full decode resized by ATen and normalised through the table.
#include "fastloop/data/transforms/augment.h"
#include "fastloop/data/transforms/image_augment.h"
#include "fastloop/data/transforms/image_resize.h"
#include "golden_support.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace fastloop;
using fastloop::test::kImageGoldenDir;

namespace {


// A uint8 H x W x 3 image: smooth gradients plus noise, so that rounding differences would show.
at::Tensor image_make(int64_t H, int64_t W, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  const at::Tensor y = at::arange(H, at::kFloat).view({H, 1, 1}), x = at::arange(W, at::kFloat).view({1, W, 1});
  const at::Tensor c = at::arange(3, at::kFloat).view({1, 1, 3});
  const at::Tensor smooth = 128 + 90 * at::sin(x / 7.0 + c) * at::cos(y / 5.0 - c);
  return (smooth + at::randn({H, W, 3}, gen) * 20).clamp(0, 255).to(at::kByte).contiguous();
}

RgbImage rgb_of(const at::Tensor& hwc, int64_t top = 0, int64_t left = 0) {
  return {hwc.data_ptr<uint8_t>(), hwc.size(1), hwc.size(0), top, left};
}

// ATen's resize of `box` of an H x W x 3 image, as H x W x 3.
at::Tensor aten_resize(const at::Tensor& hwc, const PixelRect& box, int64_t out_h, int64_t out_w) {
  const at::Tensor crop = hwc.narrow(0, box.top, box.height).narrow(1, box.left, box.width).permute({2, 0, 1}).unsqueeze(0);
  if (box.height == out_h && box.width == out_w) return crop.squeeze(0).permute({1, 2, 0}).contiguous();
  return at::_upsample_bilinear2d_aa(crop.contiguous(at::MemoryFormat::ChannelsLast), {out_h, out_w}, false)
      .squeeze(0).permute({1, 2, 0}).contiguous();
}

at::Tensor ours(ImageResizer& resizer, const RgbImage& image, const PixelRect& box, int64_t out_h, int64_t out_w,
                const PixelRect& window) {
  at::Tensor out = at::empty({window.height, window.width, 3}, at::kByte);
  resizer.resize(image, box, out_h, out_w, window, out.data_ptr<uint8_t>(), window.width * 3);
  return out;
}

std::string resize_golden_read(const std::string& name) {
  std::ifstream in(kImageGoldenDir + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << kImageGoldenDir + name;
  return {std::istreambuf_iterator<char>(in), {}};
}

// Golden image files held in memory, all of class 0.
class MemoryImages final : public EncodedImages {
 public:
  explicit MemoryImages(std::vector<std::string> files) : names_(std::move(files)) {
    for (const auto& f : names_) bytes_.push_back(resize_golden_read(f));
  }
  int64_t size() const override { return static_cast<int64_t>(names_.size()); }
  int64_t label(int64_t) const override { return 0; }
  std::string name(int64_t i) const override { return names_.at(static_cast<size_t>(i)); }
  std::string_view bytes(int64_t i, std::string&) const override { return bytes_.at(static_cast<size_t>(i)); }

 private:
  std::vector<std::string> names_, bytes_;
};

// One sample as the reference computes it: the full decode at `scale`, ATen's resize of `box` to
// out_h x out_w, the window (top, left, S, S), the flip, the table: float [3, S, S].
at::Tensor reference_sample(const std::string& file, ImageScale scale, const PixelRect& box, int64_t out_h, int64_t out_w,
                            int64_t top, int64_t left, int64_t S, bool flip, const std::vector<float>& lut) {
  ImageDecoder decoder;
  const RgbImage image = decoder.decode(resize_golden_read(file), file, scale);
  const at::Tensor hwc = at::from_blob(const_cast<uint8_t*>(image.data), {image.height, image.width, 3}, at::kByte);
  at::Tensor px = aten_resize(hwc, box, out_h, out_w).narrow(0, top, S).narrow(1, left, S);
  if (flip) px = px.flip(1);
  const at::Tensor table = at::from_blob(const_cast<float*>(lut.data()), {3, 256}, at::kFloat);
  const at::Tensor chw = px.permute({2, 0, 1}).to(at::kLong);
  at::Tensor out = at::empty({3, S, S}, at::kFloat);
  for (int64_t c = 0; c < 3; ++c) out[c] = table[c].index_select(0, chw[c].reshape(-1)).view({S, S});
  return out;
}

}  // namespace

TEST(ImageResize, EqualsAtensUint8KernelBitForBitWithEitherKernels) {
  ImageResizer fastest, portable(ResizeKernels::kPortable);
  struct Case { int64_t H, W; PixelRect box; int64_t out_h, out_w; };
  const Case cases[] = {
      {375, 500, {0, 0, 375, 500}, 224, 224},   // the whole image, ~2x down
      {375, 500, {17, 40, 301, 333}, 224, 224},  // a training crop
      {375, 500, {100, 0, 47, 500}, 224, 224},   // 5x up one way, 2x down the other
      {375, 500, {3, 5, 375 - 3, 500 - 5}, 45, 60},  // 8x down
      {64, 64, {10, 10, 12, 9}, 32, 32},         // upscales
      {64, 64, {0, 0, 64, 64}, 64, 31},          // only one side changes
      {64, 64, {5, 7, 40, 1}, 1, 7},             // 1-pixel sides
      {256, 341, {0, 0, 256, 341}, 256, 341},    // no change: a copy
      {47, 61, {0, 0, 47, 61}, 256, 332},        // eval of a small image: upscale
  };
  for (const auto& c : cases) {
    const at::Tensor img = image_make(c.H, c.W, static_cast<uint64_t>(c.out_h * 1000 + c.out_w));
    const at::Tensor want = aten_resize(img, c.box, c.out_h, c.out_w);
    for (ImageResizer* resizer : {&fastest, &portable}) {
      const at::Tensor got = ours(*resizer, rgb_of(img), c.box, c.out_h, c.out_w, {0, 0, c.out_h, c.out_w});
      EXPECT_TRUE(at::equal(got, want)) << (resizer == &fastest ? "fastest" : "portable") << " kernels, " << c.H << "x"
                                        << c.W << " box " << c.box.height << "x" << c.box.width << " -> " << c.out_h
                                        << "x" << c.out_w << ": worst "
                                        << (got.to(at::kInt) - want.to(at::kInt)).abs().max().item<int>();
    }
  }
}

TEST(ImageResize, AWindowEqualsTheWholeResizeCroppedAndReadsOnlyItsSourceRect) {
  ImageResizer resizer;
  const at::Tensor img = image_make(375, 500, 3);
  const PixelRect whole{0, 0, 375, 500};
  for (const auto& [out_h, out_w] : {std::pair<int64_t, int64_t>{256, 341}, {224, 224}, {600, 700}}) {
    const at::Tensor full = ours(resizer, rgb_of(img), whole, out_h, out_w, {0, 0, out_h, out_w});
    const PixelRect window{(out_h - 100) / 2, (out_w - 120) / 3, 100, 120};
    const at::Tensor want = full.narrow(0, window.top, window.height).narrow(1, window.left, window.width);
    EXPECT_TRUE(at::equal(ours(resizer, rgb_of(img), whole, out_h, out_w, window), want)) << out_h << "x" << out_w;
    // Only the source rectangle's pixels, as a region decode hands them over.
    const PixelRect src = resizer.source_rect(whole, out_h, out_w, window);
    ASSERT_TRUE(src.top >= 0 && src.left >= 0 && src.top + src.height <= 375 && src.left + src.width <= 500);
    EXPECT_LT(src.height * src.width, 375 * 500);
    const at::Tensor part = img.narrow(0, src.top, src.height).narrow(1, src.left, src.width).contiguous();
    EXPECT_TRUE(at::equal(ours(resizer, rgb_of(part, src.top, src.left), whole, out_h, out_w, window), want));
    const RgbImage short_part = rgb_of(part.narrow(0, 1, src.height - 1).contiguous(), src.top + 1, src.left);
    EXPECT_THROW(ours(resizer, short_part, whole, out_h, out_w, window), c10::Error);  // a row it needs is missing
  }
}

TEST(ImageAugment, EncodedBatchesEqualAFullDecodeResizedByAten) {
  Dataset data;
  data.encoded = std::make_shared<MemoryImages>(std::vector<std::string>{"large.jpg", "large422.jpg", "rgb.png", "gray.jpg"});
  data.num_classes = 1;
  data.mean = {0.485f, 0.456f, 0.406f}, data.stddev = {0.229f, 0.224f, 0.225f};
  const std::vector<float> lut = normalize_lut(data);
  const std::vector<int64_t> indices = {0, 1, 2, 3};
  at::Tensor labels = at::empty({4}, at::kLong);
  const std::vector<std::string> files = {"large.jpg", "large422.jpg", "rgb.png", "gray.jpg"};
  ImageDecoder decoder;
  // Eval at 64 px: Resize(73) + CenterCrop(64), decoded as a region at full scale (the default) or, with
  // fast_decode, the 211 x 157 JPEGs at 1/2 scale.
  data.image_height = data.image_width = 64;
  at::Tensor images = at::empty({4, 3, 64, 64}, at::kFloat);
  for (const bool fast : {false, true}) {
    AugmentOptions eval;
    eval.fast_decode = fast;
    encoded_batch_assemble(data, indices.data(), 4, eval, 5, 0, images, labels);
    for (int64_t i = 0; i < 4; ++i) {
      const ImageInfo info = decoder.info(resize_golden_read(files[i]), files[i]);
      const EvalGeometry g = eval_geometry(info.height, info.width, 64);
      const ImageScale scale = fast && info.format == ImageFormat::kJpeg
                                   ? image_scale_at_least(std::max(static_cast<double>(g.resized_height) / info.height,
                                                                   static_cast<double>(g.resized_width) / info.width))
                                   : ImageScale{};
      if (files[i].rfind("large", 0) == 0) {
        EXPECT_EQ(scale.denom, fast ? 2 : 1) << files[i];
      }
      const PixelRect whole{0, 0, scale.apply(info.height), scale.apply(info.width)};
      const at::Tensor want = reference_sample(files[i], scale, whole, g.resized_height, g.resized_width, g.crop.top,
                                               g.crop.left, 64, false, lut);
      EXPECT_TRUE(at::equal(images[i], want)) << files[i] << " eval, fast_decode " << fast;
    }
  }
  // Train at 24 px: every RandomResizedCrop box decoded at full scale by default (with fast_decode, the boxes
  // that shrink 2x or more would decode at a reduced scale).
  data.image_height = data.image_width = 24;
  images = at::empty({4, 3, 24, 24}, at::kFloat);
  const AugmentOptions train = augment_crop_flip(0);
  int64_t compared = 0, shrunk = 0;
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    encoded_batch_assemble(data, indices.data(), 4, train, 5, epoch, images, labels);
    for (int64_t i = 0; i < 4; ++i) {
      const ImageInfo info = decoder.info(resize_golden_read(files[i]), files[i]);
      const CropBox box = random_resized_crop_box(info.height, info.width, 5, epoch, i);
      shrunk += std::max(24.0 / box.height, 24.0 / box.width) <= 0.5;
      const at::Tensor want = reference_sample(files[i], {}, box, 24, 24, 0, 0, 24, random_flip(5, epoch, i), lut);
      EXPECT_TRUE(at::equal(images[i], want)) << files[i] << " train, epoch " << epoch;
      ++compared;
    }
  }
  EXPECT_GE(shrunk, 1);  // a box the fast decode would have shrunk was compared at full scale
  EXPECT_EQ(compared, 12);
}
