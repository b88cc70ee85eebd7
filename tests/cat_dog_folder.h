// The image folder the predict tests train and predict on: DIR/{train,val}/{cat,dog}, the five golden JPEGs
// (tests/golden/images/: RGB, grey, CMYK, progressive, 4:4:4) as cats and the five golden PNGs (RGB, RGBA,
// palette, 16-bit grey, grey) as dogs, in both splits.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace fastloop::test {

/// Writes the folder under `dir` (made with its parents) and returns `dir`.
inline std::string cat_dog_folder_write(const std::string& dir) {
  const std::string golden = std::string(FASTLOOP_TEST_DIR) + "/golden/images/";
  const std::map<std::string, std::vector<std::string>> classes = {
      {"cat", {"rgb.jpg", "gray.jpg", "cmyk.jpg", "progressive.jpg", "rgb444.jpg"}},
      {"dog", {"rgb.png", "rgba.png", "palette.png", "gray16.png", "gray.png"}}};
  for (const char* split : {"train", "val"}) {
    for (const auto& [cls, files] : classes) {
      const std::filesystem::path to = std::filesystem::path(dir) / split / cls;
      std::filesystem::create_directories(to);
      for (const auto& f : files) std::filesystem::copy_file(golden + f, to / f);
    }
  }
  return dir;
}

} // namespace fastloop::test
