// ClassMapFiles: the mask paths checked once (they exist), each mask read and decoded when its sample is made.
#include "fastloop/data/sources/class_map_files.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/codecs/class_map.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace fastloop {

ClassMapFiles::ClassMapFiles(std::vector<std::string> images, std::vector<std::string> masks)
    : images_(std::move(images)), masks_(std::move(masks)) {
  if (images_.size() != masks_.size())
    throw InputError(std::to_string(images_.size()) + " images but " + std::to_string(masks_.size()) +
                     " masks; give one mask file per image");
  for (size_t i = 0; i < masks_.size(); ++i) {
    const std::string& path = masks_[i];
    const std::string where = "masks[" + std::to_string(i) + "]: ";
    if (path.find('\0') != std::string::npos) throw InputError(where + "the path holds a NUL byte");
    struct stat st {};
    std::string why;
    if (::stat(path.c_str(), &st) != 0) why = errno == ENOENT ? "no such file" : std::strerror(errno);
    else if (!S_ISREG(st.st_mode)) why = "not a file";
    if (!why.empty())
      throw InputError(where + path + ": " + why + "; check the path (the class map of " + images_[i] + ")");
  }
}

void ClassMapFiles::sample_targets(int64_t index, int64_t height, int64_t width, SampleTargets& targets) const {
  const auto i = static_cast<size_t>(index);
  thread_local std::string file;  // the PNG's bytes, kept from sample to sample
  targets.instance_masks = false;
  targets.masks.resize(1);
  ImageU8& mask = targets.masks[0];
  const ClassMapSize size = class_map_read(masks_.at(i), file, mask.pixels);
  if (size.height != height || size.width != width)
    throw InputError("mask " + masks_[i] + " is " + std::to_string(size.width) + "x" + std::to_string(size.height) +
                     " pixels but its image " + images_.at(i) + " is " + std::to_string(width) + "x" +
                     std::to_string(height) + "; a class map must have its image's size");
  mask.reshape(height, width, 1);
}

} // namespace fastloop
