// ImageFolder listing with POSIX directory calls (readdir's d_type spares a stat per file, which is what
// makes a 1.28 M-file listing take seconds) and pread-style reads of one file into the caller's scratch.
// The order rules are torchvision's find_classes() and make_dataset():
//   classes = sorted(e.name for e in os.scandir(root) if e.is_dir())           (symlinks followed)
//   for root, _, files in sorted(os.walk(class_dir, followlinks=True)): for f in sorted(files): ...
// sorted() on str is code-point order, which is byte order on UTF-8 names (std::string's operator<).
#include "fastloop/data/sources/imagefolder.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/sources/image_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace fastloop {

namespace {

constexpr int kMaxDepth = 64;  // folder levels below a class folder: os.walk(followlinks=True) would loop forever

struct DirEntries {
  std::vector<std::string> dirs, files;  // os.walk's split: is_dir() following symlinks, or not
};

DirEntries dir_read(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (!dir) throw InputError("image folder " + path + ": cannot open (" + std::strerror(errno) + "); check that it exists and is readable");
  DirEntries out;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_LNK || e->d_type == DT_UNKNOWN) {
      struct stat st {};
      is_dir = ::stat((path + "/" + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }
    (is_dir ? out.dirs : out.files).push_back(name);
  }
  ::closedir(dir);
  return out;
}

// Every folder under `root` (itself included) with its files, as os.walk yields them: (path, files).
void walk(const std::string& root, int depth, std::vector<std::pair<std::string, std::vector<std::string>>>& out) {
  if (depth > kMaxDepth) throw InputError("image folder " + root + ": more than " + std::to_string(kMaxDepth) + " levels of folders (a symlink loop?)");
  DirEntries entries = dir_read(root);
  out.emplace_back(root, std::move(entries.files));
  for (const auto& d : entries.dirs) walk(root + "/" + d, depth + 1, out);
}

}  // namespace

std::shared_ptr<const ImageFolder> ImageFolder::list(const std::string& root, const std::vector<std::string>* expected_classes) {
  std::shared_ptr<ImageFolder> folder(new ImageFolder(root));
  folder->classes_ = dir_read(root).dirs;
  std::sort(folder->classes_.begin(), folder->classes_.end());
  if (folder->classes_.empty())
    throw InputError("image folder " + root + ": no class folders in it; expected " + root + "/CLASS/IMAGE.jpg");
  if (expected_classes && *expected_classes != folder->classes_)
    throw InputError("image folder " + root + ": its " + std::to_string(folder->classes_.size()) +
                     " class folders differ from train's " + std::to_string(expected_classes->size()) +
                     "; val/ needs the same class folders as train/ so that class indices agree");
  std::vector<std::pair<std::string, std::vector<std::string>>> folders;
  for (size_t c = 0; c < folder->classes_.size(); ++c) {
    const std::string class_dir = root + "/" + folder->classes_[c];
    folders.clear();
    walk(class_dir, 0, folders);
    std::sort(folders.begin(), folders.end());
    const size_t before = folder->labels_.size();
    for (auto& [dir, files] : folders) {
      std::sort(files.begin(), files.end());
      const std::string prefix = dir.substr(root.size() + 1) + "/";
      for (const auto& f : files) {
        if (!image_file_name(f)) continue;
        folder->paths_ += prefix + f;
        folder->path_end_.push_back(folder->paths_.size());
        folder->labels_.push_back(static_cast<int32_t>(c));
      }
    }
    if (folder->labels_.size() == before)
      throw InputError("image folder " + class_dir + ": no images in this class folder (extensions: .jpg .jpeg .png .ppm "
                       ".bmp .pgm .tif .tiff .webp); add some or remove the folder");
  }
  return folder;
}

std::string ImageFolder::relative_path(int64_t i) const {
  const auto k = static_cast<size_t>(i);
  const uint64_t begin = k == 0 ? 0 : path_end_.at(k - 1);
  return paths_.substr(begin, path_end_.at(k) - begin);
}

std::string_view ImageFolder::bytes(int64_t i, std::string& scratch) const { return image_file_read(name(i), scratch); }

} // namespace fastloop
