// Image decoding and the image transforms against PIL and torchvision: full-scale decodes equal PIL's
// Image.open(f).convert("RGB") byte for byte (JPEG 4:2:0 / 4:4:4 / progressive / grey / Adobe CMYK, PNG
// RGB / RGBA / grey / palette / 16-bit, WebP lossy / alpha / lossless / animated, BMP, PNM and TIFF in
// their layouts: tests/tools/image_formats_goldens.py); resized crops equal torchvision v2's
// resized_crop(antialias=True) within 1; eval geometry equals Resize + CenterCrop's. Goldens:
// tests/tools/make_image_goldens.py.
#include "fastloop/core/errors.h"
#include "fastloop/data/transforms/image_augment.h"
#include "fastloop/data/codecs/image_decode.h"
#include "golden_support.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>

using namespace fastloop;
using fastloop::test::kImageGoldenDir;

namespace {


std::string file_read(const std::string& name) {
  std::ifstream in(kImageGoldenDir + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << kImageGoldenDir + name;
  return {std::istreambuf_iterator<char>(in), {}};
}

nlohmann::json goldens() { return nlohmann::json::parse(file_read("goldens.json")); }

// The format a golden file's extension stands for.
ImageFormat format_of(const std::string& file) {
  const std::string ext = file.substr(file.rfind('.') + 1);
  if (ext == "jpg") return ImageFormat::kJpeg;
  if (ext == "png") return ImageFormat::kPng;
  if (ext == "webp") return ImageFormat::kWebp;
  if (ext == "bmp") return ImageFormat::kBmp;
  if (ext == "tif" || ext == "tiff") return ImageFormat::kTiff;
  return ImageFormat::kPnm;
}

std::string error_of(const std::string& file) {
  ImageDecoder decoder;
  const std::string bytes = file_read(file);
  try {
    decoder.decode(bytes, kImageGoldenDir + file);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ImageDecode, FullScaleDecodesEqualPilConvertRgb) {
  ImageDecoder decoder;
  const nlohmann::json all = goldens();  // a range-for over a temporary's member would dangle
  for (const auto& [name, g] : all["decoded"].items()) {
    const std::string bytes = file_read(name);
    const ImageInfo info = decoder.info(bytes, name);
    EXPECT_EQ(info.format, format_of(name)) << name;
    EXPECT_EQ(info.width, g["width"].get<int64_t>()) << name;
    EXPECT_EQ(info.height, g["height"].get<int64_t>()) << name;
    const RgbImage image = decoder.decode(bytes, name);
    const std::string expected = file_read(g["pixels"].get<std::string>());
    ASSERT_EQ(image.width * image.height * 3, static_cast<int64_t>(expected.size())) << name;
    int64_t differing = 0;
    for (size_t k = 0; k < expected.size(); ++k) differing += image.data[k] != static_cast<uint8_t>(expected[k]);
    EXPECT_EQ(differing, 0) << name << ": bytes that differ from PIL's decode";
  }
  EXPECT_GE(all["decoded"].size(), 48u) << "goldens.json lost formats; rerun tests/tools/make_image_goldens.py";
}

TEST(ImageDecode, BadFilesAreInputErrorsNamingTheFile) {
  for (const char* file : {"truncated.jpg", "truncated.png", "not_an_image.jpg", "truncated_lossy.webp",
                           "truncated_rgb.bmp", "truncated_rgb.ppm", "truncated_lzw.tif", "float.tif"}) {
    const std::string message = error_of(file);
    EXPECT_NE(message.find(kImageGoldenDir + file), std::string::npos) << file << ": " << message;
    EXPECT_NE(message.find("--bad-image-policy"), std::string::npos) << message;
  }
  EXPECT_NE(error_of("truncated.jpg").find("truncated"), std::string::npos);
  EXPECT_NE(error_of("truncated_rgb.bmp").find("truncated"), std::string::npos);
  EXPECT_NE(error_of("truncated_rgb.ppm").find("truncated"), std::string::npos);
}

TEST(ImageDecode, ADecoderThatMetABadJpegDecodesTheNextOnesAsAFreshOne) {
  const std::string good = file_read("rgb.jpg"), fresh_pixels = [&] {
    ImageDecoder fresh;
    const RgbImage image = fresh.decode(good, "rgb.jpg");
    return std::string(reinterpret_cast<const char*>(image.data), static_cast<size_t>(image.width * image.height * 3));
  }();
  ImageDecoder decoder;  // one per loader thread: a bad image must not spoil the images after it
  for (const char* bad : {"not_an_image.jpg", "truncated.jpg"}) {
    EXPECT_THROW(decoder.decode(file_read(bad), bad), InputError) << bad;
    const RgbImage image = decoder.decode(good, "rgb.jpg");
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(image.data), static_cast<size_t>(image.width * image.height * 3)),
              fresh_pixels) << "after " << bad;
  }
}

TEST(ImageDecode, AFloatTiffThatPilOpensIsRefusedWithWhatToDo) {
  const std::string message = error_of("float.tif");  // PIL opens it as mode "F"
  EXPECT_NE(message.find("floating-point"), std::string::npos) << message;
  EXPECT_NE(message.find("convert it to 8-bit"), std::string::npos) << message;
}

TEST(ImageDecode, EveryFormatRefusesADecompressionBombFromItsHeader) {
  ImageDecoder decoder(/*max_pixels=*/1000);
  for (const char* file : {"lossy.webp", "animated.webp", "rgb.bmp", "rle8.bmp", "rgb.ppm", "plain.pgm", "lzw.tif", "jpeg.tif"}) {
    try {
      decoder.info(file_read(file), file);
      ADD_FAILURE() << file << ": 61x47 pixels passed a limit of 1000";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("more than the 1000 allowed"), std::string::npos) << e.what();
    }
  }
}

TEST(ImageDecode, DecompressionBombsAreRefusedFromTheHeader) {
  ImageDecoder decoder(/*max_pixels=*/1000);
  const std::string bytes = file_read("rgb.jpg");  // 61 x 47 = 2867 pixels
  EXPECT_THROW(decoder.info(bytes, "rgb.jpg"), InputError);
}

TEST(ImageDecode, ScaleIsTheSmallestThatCoversTheRequest) {
  const auto as_double = [](ImageScale s) { return static_cast<double>(s.num) / s.denom; };
  EXPECT_DOUBLE_EQ(as_double(image_scale_at_least(0.01)), 1.0 / 8);
  EXPECT_DOUBLE_EQ(as_double(image_scale_at_least(0.125)), 1.0 / 8);
  EXPECT_DOUBLE_EQ(as_double(image_scale_at_least(0.2)), 1.0 / 4);
  EXPECT_DOUBLE_EQ(as_double(image_scale_at_least(0.3)), 1.0 / 2);  // not 3/8: its IDCT is slow plain C
  EXPECT_DOUBLE_EQ(as_double(image_scale_at_least(0.5)), 1.0 / 2);
  EXPECT_DOUBLE_EQ(as_double(image_scale_at_least(0.51)), 1.0);  // not 5/8, 3/4 or 7/8: slower than full scale
  EXPECT_DOUBLE_EQ(as_double(image_scale_at_least(3.0)), 1.0);  // upscaling decodes at full size
}

TEST(ImageDecode, ReducedScaleDecodeHasTurboJpegsSizeAndThePicture) {
  ImageDecoder decoder;
  const std::string bytes = file_read("rgb444.jpg");
  const RgbImage full = decoder.decode(bytes, "rgb444.jpg");
  const at::Tensor full_t = at::from_blob(const_cast<uint8_t*>(full.data), {full.height, full.width, 3}, at::kByte).clone();
  const RgbImage half = decoder.decode(bytes, "rgb444.jpg", {1, 2});
  EXPECT_EQ(half.width, 31);   // ceil(61 / 2)
  EXPECT_EQ(half.height, 24);  // ceil(47 / 2)
  // The 1/2 decode is a 2x2 average of the full one, near enough: mean error of a few levels.
  const at::Tensor half_t = at::from_blob(const_cast<uint8_t*>(half.data), {24, 31, 3}, at::kByte).to(at::kFloat);
  const at::Tensor pooled = at::avg_pool2d(full_t.to(at::kFloat).permute({2, 0, 1}).unsqueeze(0), 2, 2, 0, /*ceil_mode=*/true)
                                .squeeze(0).permute({1, 2, 0});
  EXPECT_LT((half_t - pooled).abs().mean().item<double>(), 6.0);
}

namespace {
at::Tensor pixels_of(const RgbImage& image) {  // [H, W, 3], a copy
  return at::from_blob(const_cast<uint8_t*>(image.data), {image.height, image.width, 3}, at::kByte).clone();
}
}  // namespace

TEST(ImageDecode, RegionDecodeEqualsTheFullDecodeInsideTheRegion) {
  ImageDecoder decoder;
  int64_t partial = 0;  // regions that really decoded less than the whole image
  for (const char* file : {"rgb.jpg", "rgb444.jpg", "progressive.jpg", "gray.jpg", "large.jpg", "large422.jpg", "cmyk.jpg"}) {
    const std::string bytes = file_read(file);
    for (const ImageScale scale : {ImageScale{1, 1}, ImageScale{3, 4}, ImageScale{1, 2}, ImageScale{1, 4}, ImageScale{1, 8}}) {
      const at::Tensor full = pixels_of(decoder.decode(bytes, file, scale));
      const int64_t H = full.size(0), W = full.size(1);
      for (int64_t k = 0; k < 16; ++k) {  // spread over the image: edges, iMCU boundaries, single rows
        PixelRect want;
        want.top = (k * 7919 + 3 * k) % H;
        want.left = (k * 104729 + 5 * k) % W;
        want.height = 1 + (k * 31 + 7) % (H - want.top);
        want.width = 1 + (k * 17 + 11) % (W - want.left);
        const RgbImage part = decoder.decode_region(bytes, file, decoder.info(bytes, file), scale, want);
        const std::string where = std::string(file) + " at " + std::to_string(scale.num) + "/" +
                                  std::to_string(scale.denom) + ", rows " + std::to_string(want.top) + "+" +
                                  std::to_string(want.height) + ", columns " + std::to_string(want.left) + "+" +
                                  std::to_string(want.width);
        ASSERT_TRUE(part.top <= want.top && part.left <= want.left && part.top + part.height >= want.top + want.height &&
                    part.left + part.width >= want.left + want.width) << where;
        partial += part.height * part.width < H * W;
        const at::Tensor got = pixels_of(part).narrow(0, want.top - part.top, want.height).narrow(1, want.left - part.left, want.width);
        EXPECT_TRUE(at::equal(got, full.narrow(0, want.top, want.height).narrow(1, want.left, want.width))) << where;
      }
    }
  }
  EXPECT_GT(partial, 200) << "region decodes fell back to whole images";
}

TEST(ImageDecode, RegionDecodeOfATruncatedJpegIsStillAnError) {
  ImageDecoder decoder;
  const std::string bytes = file_read("truncated.jpg");  // the first half: the top rows are all there
  try {
    decoder.decode_region(bytes, "truncated.jpg", decoder.info(bytes, "truncated.jpg"), {1, 1}, {0, 0, 8, 8});
    FAIL() << "a truncated JPEG decoded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated JPEG"), std::string::npos) << e.what();
  }
}

TEST(ImageAugment, ResizedCropEqualsTorchvisionWithinOne) {
  ImageDecoder decoder;
  const nlohmann::json all = goldens();
  for (const auto& c : all["crops"]) {
    const std::string file = c["image"];
    const RgbImage image = decoder.decode(file_read(file), file);
    const auto box = c["box"];
    const int64_t out_h = c["size"][0], out_w = c["size"][1];
    at::Tensor out;
    resized_crop(image, {box[0], box[1], box[2], box[3]}, out_h, out_w, out);
    const std::string expected = file_read(c["pixels"].get<std::string>());
    const at::Tensor want = at::from_blob(const_cast<char*>(expected.data()), {1, 3, out_h, out_w}, at::kByte);
    ASSERT_EQ(out.sizes(), want.sizes());
    const int64_t worst = (out.to(at::kInt) - want.to(at::kInt)).abs().max().item<int64_t>();
    EXPECT_LE(worst, 1) << c.dump();
  }
}

TEST(ImageAugment, EvalGeometryEqualsResizeThenCenterCrop) {
  const nlohmann::json all = goldens();
  for (const auto& g : all["eval_geometry"]) {
    const EvalGeometry got = eval_geometry(g["height"], g["width"], g["size"]);
    EXPECT_EQ(got.resized_height, g["resized_height"].get<int64_t>()) << g.dump();
    EXPECT_EQ(got.resized_width, g["resized_width"].get<int64_t>()) << g.dump();
    EXPECT_EQ(got.crop.top, g["top"].get<int64_t>()) << g.dump();
    EXPECT_EQ(got.crop.left, g["left"].get<int64_t>()) << g.dump();
  }
}

TEST(ImageAugment, RandomResizedCropFollowsTorchvisionsRanges) {
  const int64_t H = 375, W = 500;
  double area_min = 1, area_max = 0, ratio_min = 10, ratio_max = 0;
  int flips = 0;
  for (int64_t i = 0; i < 2000; ++i) {
    const CropBox b = random_resized_crop_box(H, W, 7, 3, i);
    ASSERT_TRUE(b.top >= 0 && b.left >= 0 && b.height >= 1 && b.width >= 1 && b.top + b.height <= H && b.left + b.width <= W);
    const double area = static_cast<double>(b.height * b.width) / (H * W), ratio = static_cast<double>(b.width) / b.height;
    area_min = std::min(area_min, area), area_max = std::max(area_max, area);
    ratio_min = std::min(ratio_min, ratio), ratio_max = std::max(ratio_max, ratio);
    const CropBox again = random_resized_crop_box(H, W, 7, 3, i);  // a function of (seed, epoch, index)
    EXPECT_TRUE(again.top == b.top && again.left == b.left && again.height == b.height && again.width == b.width);
    flips += random_flip(7, 3, i);
  }
  EXPECT_GT(area_min, 0.075); EXPECT_LT(area_min, 0.1);   // scale (0.08, 1), up to rounding
  EXPECT_LE(area_max, 1.0); EXPECT_GT(area_max, 0.9);
  EXPECT_GT(ratio_min, 0.74); EXPECT_LT(ratio_min, 0.8);  // ratio (3/4, 4/3)
  EXPECT_LT(ratio_max, 1.35); EXPECT_GT(ratio_max, 1.25);
  EXPECT_GT(flips, 900); EXPECT_LT(flips, 1100);
}

TEST(ImageAugment, RandomResizedCropFallsBackToTheCentreForExtremeShapes) {
  // 1000 x 10: no draw of area >= 800 px fits 10 rows, so all 10 tries fail: centre crop at ratio 4/3.
  const CropBox b = random_resized_crop_box(10, 1000, 0, 0, 5);
  EXPECT_EQ(b.height, 10);
  EXPECT_EQ(b.width, 13);  // round(10 * 4/3)
  EXPECT_EQ(b.top, 0);
  EXPECT_EQ(b.left, (1000 - 13) / 2);
}
