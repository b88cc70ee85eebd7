// The names of a data set's classes, index by index: what checkpoints, exports, `eval` and `predict` print
// instead of bare class numbers. Image folders name them by their class folders, shards by the
// classes.txt that `fastloop pack` writes beside them, the IDX/CIFAR sets by their published names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

/// Fashion-MNIST's ten names as its README (and torchvision's FashionMNIST.classes) gives them.
std::vector<std::string> class_names_fashion_mnist();
/// torchvision's MNIST.classes: "0 - zero" ... "9 - nine".
std::vector<std::string> class_names_mnist();
/// CIFAR-10's batches.meta.txt: airplane ... truck.
std::vector<std::string> class_names_cifar10();
/// "0", "1", ... "n-1": a source that names no classes.
std::vector<std::string> class_names_numbered(int64_t n);

/// The names in `path`, one per line (a trailing newline and '\r' ignored), for `num_classes` classes:
/// more lines than classes are kept (a class may have no sample), fewer or an empty name throw InputError.
std::vector<std::string> class_names_read(const std::string& path, int64_t num_classes);

} // namespace fastloop
