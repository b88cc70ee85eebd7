// Class maps from PNG (data/codecs/class_map.h) and the segmentation targets read from them
// (data/sources/class_map_files.h): palette indices as stored, grey values, sub-byte rows unpacked as PIL
// unpacks them, and every other PNG (RGB, 16-bit), a truncated one or a mask of the wrong size refused with
// an InputError naming the file. The PNGs are written here (stored deflate blocks: no zlib needed).
#include "fastloop/data/codecs/class_map.h"
#include "fastloop/data/sources/class_map_files.h"
#include "data_files.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace fastloop;
using namespace fastloop::test_data;

namespace {

uint32_t class_map_adler32(const Bytes& data) {
  uint32_t a = 1, b = 0;
  for (uint8_t byte : data) a = (a + byte) % 65521, b = (b + a) % 65521;
  return (b << 16) | a;
}

void class_map_chunk(Bytes& png, const char* type, const Bytes& data) {
  put_be32(png, static_cast<uint32_t>(data.size()));
  Bytes typed(type, type + 4);
  typed.insert(typed.end(), data.begin(), data.end());
  png.insert(png.end(), typed.begin(), typed.end());
  put_be32(png, crc32_of(typed));
}

// A PNG of `rows` (each one filter byte 0, then the packed samples) in one IDAT of stored deflate blocks.
Bytes class_map_png(uint32_t width, uint32_t height, uint8_t depth, uint8_t color_type, const Bytes& rows,
                    size_t palette_entries = 0) {
  Bytes png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  Bytes ihdr;
  put_be32(ihdr, width);
  put_be32(ihdr, height);
  ihdr.insert(ihdr.end(), {depth, color_type, 0, 0, 0});
  class_map_chunk(png, "IHDR", ihdr);
  if (palette_entries > 0) {
    Bytes plte;
    for (size_t i = 0; i < palette_entries; ++i) plte.insert(plte.end(), {uint8_t(i * 3), uint8_t(i * 5), uint8_t(i * 7)});
    class_map_chunk(png, "PLTE", plte);
  }
  Bytes zlib = {0x78, 0x01};
  const Bytes deflate = gzip_member(rows);  // its stored blocks sit between the 10-byte header and the 8-byte trailer
  zlib.insert(zlib.end(), deflate.begin() + 10, deflate.end() - 8);
  put_be32(zlib, class_map_adler32(rows));
  class_map_chunk(png, "IDAT", zlib);
  class_map_chunk(png, "IEND", {});
  return png;
}

// Samples of `depth` bits, packed most significant first, each row behind a filter byte 0.
Bytes class_map_rows(const std::vector<uint8_t>& samples, uint32_t width, uint32_t height, int depth, int channels = 1) {
  Bytes rows;
  for (uint32_t y = 0; y < height; ++y) {
    rows.push_back(0);
    if (depth == 16) {
      for (uint32_t x = 0; x < width * channels; ++x) rows.insert(rows.end(), {samples[y * width * channels + x], 0});
      continue;
    }
    Bytes row((width * channels * depth + 7) / 8, 0);
    for (uint32_t x = 0; x < width * channels; ++x)
      row[x * depth / 8] |= static_cast<uint8_t>(samples[y * width * channels + x] << (8 - depth - x * depth % 8));
    rows.insert(rows.end(), row.begin(), row.end());
  }
  return rows;
}

std::string class_map_string(const Bytes& b) { return std::string(b.begin(), b.end()); }

std::vector<uint8_t> class_map_decoded(const Bytes& png, ClassMapSize& size) {
  std::vector<uint8_t> pixels;
  size = class_map_decode(class_map_string(png), "mask.png", pixels);
  return pixels;
}

}  // namespace

TEST(ClassMap, PaletteGivesTheIndicesAsStored) {
  const uint32_t w = 7, h = 3;  // VOC's classes 0..20 and its border 255
  std::vector<uint8_t> values;
  for (uint32_t i = 0; i < w * h; ++i) values.push_back(i == 4 || i == 11 ? 255 : static_cast<uint8_t>(i % 21));
  ClassMapSize size;
  const auto got = class_map_decoded(class_map_png(w, h, 8, 3, class_map_rows(values, w, h, 8), 256), size);
  EXPECT_EQ(size.height, h);
  EXPECT_EQ(size.width, w);
  EXPECT_EQ(got, values);
}

TEST(ClassMap, GreyscaleGivesItsValues) {
  const uint32_t w = 5, h = 4;
  std::vector<uint8_t> values;
  for (uint32_t i = 0; i < w * h; ++i) values.push_back(static_cast<uint8_t>(i * 13));
  ClassMapSize size;
  EXPECT_EQ(class_map_decoded(class_map_png(w, h, 8, 0, class_map_rows(values, w, h, 8)), size), values);
}

TEST(ClassMap, SubBytePaletteIsUnpackedAndGreyScaledAsPil) {
  const uint32_t w = 5, h = 3;  // an odd width: each row ends inside a byte
  std::vector<uint8_t> indices;
  for (uint32_t i = 0; i < w * h; ++i) indices.push_back(static_cast<uint8_t>((i * 7) % 16));
  ClassMapSize size;
  EXPECT_EQ(class_map_decoded(class_map_png(w, h, 4, 3, class_map_rows(indices, w, h, 4), 16), size), indices);
  std::vector<uint8_t> two(indices.size()), one(indices.size()), two_scaled(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) two[i] = indices[i] % 4, one[i] = indices[i] % 2, two_scaled[i] = two[i] * 85;
  EXPECT_EQ(class_map_decoded(class_map_png(w, h, 2, 3, class_map_rows(two, w, h, 2), 4), size), two);
  EXPECT_EQ(class_map_decoded(class_map_png(w, h, 2, 0, class_map_rows(two, w, h, 2)), size), two_scaled);  // PIL's L;2
  EXPECT_EQ(class_map_decoded(class_map_png(w, h, 1, 0, class_map_rows(one, w, h, 1)), size), one);  // mode "1" as numpy
}

TEST(ClassMap, OtherPngsAreRefusedNamingTheFileAndWhatIsAccepted) {
  const uint32_t w = 3, h = 2;
  const std::vector<uint8_t> samples(w * h * 3, 7);
  std::vector<uint8_t> pixels;
  const std::string rgb = input_error_of(
      [&] { class_map_decode(class_map_string(class_map_png(w, h, 8, 2, class_map_rows(samples, w, h, 8, 3))), "a/m.png", pixels); });
  EXPECT_NE(rgb.find("a/m.png"), std::string::npos) << rgb;
  EXPECT_NE(rgb.find("an RGB PNG"), std::string::npos) << rgb;
  EXPECT_NE(rgb.find("palette or greyscale"), std::string::npos) << rgb;
  const std::string deep = input_error_of(
      [&] { class_map_decode(class_map_string(class_map_png(w, h, 16, 0, class_map_rows(samples, w, h, 16))), "d.png", pixels); });
  EXPECT_NE(deep.find("16-bit"), std::string::npos) << deep;
  const std::string jpeg = input_error_of([&] { class_map_decode("\xFF\xD8\xFF\xE0 not a png", "j.jpg", pixels); });
  EXPECT_NE(jpeg.find("j.jpg: not a PNG"), std::string::npos) << jpeg;
}

TEST(ClassMap, TruncatedPngIsRefusedNamingTheFile) {
  const uint32_t w = 16, h = 16;
  const std::vector<uint8_t> values(w * h, 3);
  const Bytes png = class_map_png(w, h, 8, 3, class_map_rows(values, w, h, 8), 4);
  std::vector<uint8_t> pixels;
  for (size_t cut : {size_t{20}, png.size() / 2, png.size() - 22}) {  // the header, the pixels, their last bytes
    const std::string message =
        input_error_of([&] { class_map_decode(class_map_string(slice(png, 0, cut)), "cut.png", pixels); });
    EXPECT_NE(message.find("mask cut.png: "), std::string::npos) << cut << ": " << message;
  }
}

TEST(ClassMapFiles, MasksComeAtTheirImagesSizeOrNameBothFiles) {
  TempDir dir;
  const uint32_t w = 4, h = 3;
  const std::vector<uint8_t> values = {0, 1, 2, 255, 4, 5, 6, 7, 8, 9, 10, 255};
  write_file(dir / "m.png", class_map_png(w, h, 8, 3, class_map_rows(values, w, h, 8), 256));
  const ClassMapFiles files({dir / "i.jpg"}, {dir / "m.png"});
  SampleTargets targets;
  files.sample_targets(0, h, w, targets);
  ASSERT_EQ(targets.masks.size(), 1u);
  EXPECT_FALSE(targets.instance_masks);
  EXPECT_FALSE(targets.has_boxes);
  const ImageU8& mask = targets.masks[0];
  EXPECT_EQ(mask.channels, 1);
  EXPECT_EQ(std::vector<uint8_t>(mask.data(), mask.data() + mask.bytes()), values);
  const std::string other = input_error_of([&] { files.sample_targets(0, h + 1, w, targets); });
  EXPECT_NE(other.find(dir / "m.png"), std::string::npos) << other;
  EXPECT_NE(other.find(dir / "i.jpg"), std::string::npos) << other;
  EXPECT_NE(other.find("4x3"), std::string::npos) << other;
}

TEST(ClassMapFiles, MissingMasksAndUnequalListsAreInputErrors) {
  TempDir dir;
  const std::string missing = input_error_of([&] { ClassMapFiles({dir / "i.jpg"}, {dir / "none.png"}); });
  EXPECT_NE(missing.find("masks[0]: " + dir / "none.png" + ": no such file"), std::string::npos) << missing;
  const std::string unequal = input_error_of([&] { ClassMapFiles({dir / "a.jpg", dir / "b.jpg"}, {dir / "a.png"}); });
  EXPECT_NE(unequal.find("2 images but 1 masks"), std::string::npos) << unequal;
}
