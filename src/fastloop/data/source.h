// Turns a data spec (the --data flag, DataConfig::source) into train and test splits.
// Forms: fashion-mnist[:DIR] | mnist:DIR | cifar10:DIR | synthetic[:CxHxW[:N]].
#pragma once

#include "fastloop/data/dataset.h"

#include <string>

namespace fastloop {

// The forms data_load accepts, as listed in its error messages and in the CLI's help.
constexpr const char* kDataSpecForms = "fashion-mnist[:DIR], mnist:DIR, cifar10:DIR, synthetic[:CxHxW[:N]]";

// Loads the splits a spec names:
//   fashion-mnist[:DIR]   IDX files in DIR (default /usr/share/datasets/fashion-mnist), plain or .gz
//   mnist:DIR             the same reader, same file names
//   cifar10:DIR           the binary version, in DIR or DIR/cifar-10-batches-bin
//   synthetic[:CxHxW[:N]] 10 classes, default 3x32x32 and N = 2048 train images; always 512 test images,
//                         seed 0, both splits cut from one draw so they share the class templates
// A spec that does not parse throws InputError naming the spec and listing the forms.
DatasetSplits data_load(const std::string& spec);

} // namespace fastloop
