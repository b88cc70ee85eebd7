#include "fastloop/data/sources/sample_files.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/codecs/class_map.h"
#include "fastloop/data/codecs/image_decode.h"

#include <ATen/ATen.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace fastloop {

at::Tensor image_file_decode(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError("image " + path + ": cannot open it; check that it exists and is readable");
  const std::string bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  ImageDecoder decoder;
  const RgbImage image = decoder.decode(bytes, path);
  at::Tensor out = at::empty({3, image.height, image.width}, at::kByte);
  uint8_t* planes = out.data_ptr<uint8_t>();
  const int64_t area = image.height * image.width;
  for (int64_t i = 0; i < area; ++i)  // HWC to CHW without an ATen op (no OpenMP team woken for one image)
    for (int64_t c = 0; c < 3; ++c) planes[c * area + i] = image.data[i * 3 + c];
  return out;
}

at::Tensor class_map_file_decode(const std::string& path) {
  std::string bytes;
  std::vector<uint8_t> pixels;
  const ClassMapSize size = class_map_read(path, bytes, pixels);
  at::Tensor out = at::empty({1, size.height, size.width}, at::kByte);
  std::memcpy(out.data_ptr<uint8_t>(), pixels.data(), pixels.size());
  return out;
}

} // namespace fastloop
