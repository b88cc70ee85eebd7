// Reader of CIFAR-10's binary version (cifar-10-binary.tar.gz, extracted) into uint8 tensors.
// Each record is 1 label byte + 3072 pixel bytes (3x32x32, CHW); malformed files throw InputError
// naming the file, the byte offset, what was expected and found, and what to do.
#pragma once

#include "fastloop/data/sources/dataset.h"

#include <string>

namespace fastloop {

// Reads data_batch_1..5.bin (train) and test_batch.bin (test) from dir, or from dir/cifar-10-batches-bin.
// Any whole number of records per file is accepted (the official files hold 10000 each).
// mean (0.4914, 0.4822, 0.4465) and stddev (0.2470, 0.2435, 0.2616): the train split's, as torchvision
// recipes use them. name is "cifar10".
DatasetSplits cifar10_load(const std::string& dir);

} // namespace fastloop
