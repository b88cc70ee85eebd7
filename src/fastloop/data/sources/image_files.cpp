// ImageFiles: the inputs expanded (std::filesystem's recursive walk, sorted), and each file read whole.
#include "fastloop/data/sources/image_files.h"

#include "fastloop/core/errors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace fastloop {

std::shared_ptr<const ImageFiles> ImageFiles::list(const std::vector<std::string>& inputs) {
  auto files = std::shared_ptr<ImageFiles>(new ImageFiles());
  namespace fs = std::filesystem;
  for (const auto& input : inputs) {
    std::error_code ec;
    if (fs::is_directory(input, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(input, fs::directory_options::follow_directory_symlink, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file(ec) && image_file_name(it->path().filename().string())) found.push_back(it->path().string());
      if (ec) throw InputError("predict: cannot list " + input + " (" + ec.message() + ")");
      std::sort(found.begin(), found.end());
      files->paths_.insert(files->paths_.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(input, ec)) {
      if (!image_file_name(fs::path(input).filename().string()))
        throw InputError("predict: " + input + " is not an image file (extensions: .jpg .jpeg .png .ppm .bmp .pgm "
                         ".tif .tiff .webp)");
      files->paths_.push_back(input);
    } else {
      throw InputError("predict: " + input + " does not exist; give image files, folders or a --data source");
    }
  }
  if (files->paths_.empty()) throw InputError("predict: no image files in the inputs given");
  return files;
}

std::string_view ImageFiles::bytes(int64_t i, std::string& scratch) const { return image_file_read(name(i), scratch); }

const char* const kImageExtensions[9] = {".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp"};

bool image_file_name(const std::string& file_name) {
  std::string lower = file_name;
  for (char& c : lower) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  for (const char* ext : kImageExtensions) {
    const size_t n = std::strlen(ext);
    if (lower.size() >= n && lower.compare(lower.size() - n, n, ext) == 0) return true;
  }
  return false;
}

std::string_view image_file_read(const std::string& path, std::string& scratch) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError("image " + path + ": cannot open (" + std::strerror(errno) + "); check that it is readable");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw InputError("image " + path + ": cannot stat (" + std::strerror(err) + ")");
  }
  scratch.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < scratch.size()) {
    const ssize_t n = ::pread(fd, scratch.data() + done, scratch.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      throw InputError("image " + path + ": cannot read (" + std::strerror(err) + "); check the file and the disk");
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return {scratch.data(), scratch.size()};
}

} // namespace fastloop
