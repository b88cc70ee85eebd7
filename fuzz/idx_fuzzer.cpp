// libFuzzer target for the IDX reader (idx_load), plain and gzip: any pair of files must load or throw
// InputError, never crash, read out of bounds or allocate more than the files can hold.
// Input: byte 0 = flags (bit 0: gzip the images file, bit 1: gzip the labels file; the seeds also hold
// raw .gz files, so the gzip framing itself is mutated), bytes 1-2 = length of the images part (LE),
// then the images file, then the labels file.
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/idx.h"
#include "fuzz_files.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace {

fastloop::fuzz::ScratchDir& scratch() {
  static fastloop::fuzz::ScratchDir dir;
  return dir;
}

void write_part(const std::string& path, const uint8_t* data, size_t size, bool compress) {
  if (!compress) return fastloop::fuzz::write_file(path, data, size);
  gzFile f = gzopen(path.c_str(), "wb1");
  if (!f || (size > 0 && gzwrite(f, data, static_cast<unsigned>(size)) != static_cast<int>(size)) ||
      gzclose(f) != Z_OK)
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const uint8_t flags = data[0];
  const size_t split = std::min<size_t>(size - 3, data[1] | (size_t{data[2]} << 8));
  const uint8_t* images = data + 3;
  const std::string images_path = scratch() / "images", labels_path = scratch() / "labels";
  write_part(images_path, images, split, flags & 1);
  write_part(labels_path, images + split, size - 3 - split, flags & 2);
  try {
    const fastloop::Dataset ds = fastloop::idx_load(images_path, labels_path, 10);
    // What was accepted must be as large as promised: touch the last pixel and label.
    volatile uint8_t last_pixel = ds.images.data_ptr<uint8_t>()[ds.images.numel() - 1];
    volatile int64_t last_label = ds.labels.data_ptr<int64_t>()[ds.labels.numel() - 1];
    if (ds.labels.size(0) != ds.images.size(0) || last_label < 0 || last_label >= 10) std::abort();
    (void)last_pixel;
  } catch (const fastloop::InputError&) {
  }
  return 0;
}
