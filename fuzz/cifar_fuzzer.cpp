// libFuzzer target for the CIFAR-10 binary reader (cifar10_load): the input becomes data_batch_1.bin next
// to four valid one-record batches and a valid test_batch.bin; it must load or throw InputError.
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/cifar.h"
#include "fuzz_files.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const fastloop::fuzz::ScratchDir& scratch() {
  static const fastloop::fuzz::ScratchDir dir = [] {
    fastloop::fuzz::ScratchDir d;
    std::vector<uint8_t> record(3073, 7);
    record[0] = 3;  // label
    for (const char* name : {"data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin",
                             "test_batch.bin"})
      fastloop::fuzz::write_file(d / name, record.data(), record.size());
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fastloop::fuzz::write_file(scratch() / "data_batch_1.bin", data, size);
  try {
    const fastloop::DatasetSplits splits = fastloop::cifar10_load(scratch().path());
    const int64_t n = splits.train.size();
    if (n != static_cast<int64_t>(size / 3073) + 4 || splits.test.size() != 1) std::abort();
    const int64_t* labels = splits.train.labels.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i)
      if (labels[i] < 0 || labels[i] >= 10) std::abort();
  } catch (const fastloop::InputError&) {
  }
  return 0;
}
