// Published class names, and the classes.txt reader of tar shards.
#include "fastloop/data/sources/class_names.h"

#include "fastloop/core/errors.h"

#include <fstream>

namespace fastloop {

std::vector<std::string> class_names_fashion_mnist() {
  return {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};
}

std::vector<std::string> class_names_mnist() {
  return {"0 - zero", "1 - one", "2 - two", "3 - three", "4 - four",
          "5 - five", "6 - six", "7 - seven", "8 - eight", "9 - nine"};
}

std::vector<std::string> class_names_cifar10() {
  return {"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"};
}

std::vector<std::string> class_names_numbered(int64_t n) {
  std::vector<std::string> names;
  for (int64_t i = 0; i < n; ++i) names.push_back(std::to_string(i));
  return names;
}

std::vector<std::string> class_names_read(const std::string& path, int64_t num_classes) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the class names file");
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) throw InputError(path + ", line " + std::to_string(names.size() + 1) + ": an empty class name; "
                                       "write one name per line, in label order");
    names.push_back(line);
  }
  if (static_cast<int64_t>(names.size()) < num_classes)
    throw InputError(path + ": " + std::to_string(names.size()) + " class names for labels up to " +
                     std::to_string(num_classes - 1) + "; write one name per label, in label order");
  return names;
}

} // namespace fastloop
