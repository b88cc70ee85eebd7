// libFuzzer target for the tar reader (tar_list) and the WebDataset grouping over it (shard_index): any
// bytes must list or throw InputError, never crash or read outside the buffer; every member listed must
// lie inside the archive, every sample's image too, and every class index must be in range. The listing of
// a shard still arriving (shard_index_prefix, cut at three points) lies inside its part and, where the whole
// archive indexes, gives the whole's first samples. Each input is listed as an image shard and as a video shard
// (KEY.mp4 with KEY.cls: remote video shards list their members so).
// Input: the archive itself (the seeds are small shards: ustar as `fastloop pack` writes it, GNU tar's
// long names, Python tarfile's pax headers, a video shard).
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/shards.h"
#include "fastloop/data/sources/tar.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view archive(reinterpret_cast<const char*>(data), size);
  try {
    for (const fastloop::TarMember& m : fastloop::tar_list(archive, "fuzz.tar")) {
      if (m.offset < 0 || m.size < 0 || m.offset % 512 != 0 || m.size > static_cast<int64_t>(size) - m.offset)
        std::abort();
      volatile char last = m.size > 0 ? archive[static_cast<size_t>(m.offset + m.size - 1)] : 0;
      (void)last;
    }
  } catch (const fastloop::InputError&) {
  }
  for (const bool videos : {false, true}) {  // image shards, and video shards (KEY.mp4 with KEY.cls)
    std::vector<fastloop::ShardSample> whole;
    bool indexed = false;
    try {
      whole = fastloop::shard_index(archive, "fuzz.tar", videos);
      indexed = true;
      for (const fastloop::ShardSample& s : whole) {
        if (s.offset < 0 || s.size < 0 || s.size > static_cast<int64_t>(size) - s.offset) std::abort();
        if (s.label < 0 || s.label >= (int64_t{1} << 24) || s.key.empty()) std::abort();
      }
    } catch (const fastloop::InputError&) {
    }
    for (size_t cut : {size / 3, size / 2, size}) {
      try {
        const auto part = fastloop::shard_index_prefix(archive.substr(0, cut), "fuzz.tar", videos);
        if (indexed && part.size() > whole.size()) std::abort();
        for (size_t k = 0; k < part.size(); ++k) {
          const fastloop::ShardSample& s = part[k];
          if (s.offset < 0 || s.size < 0 || s.size > static_cast<int64_t>(cut) - s.offset) std::abort();
          if (indexed && (s.offset != whole[k].offset || s.size != whole[k].size || s.label != whole[k].label ||
                          s.key != whole[k].key))
            std::abort();
        }
      } catch (const fastloop::InputError&) {
      }
    }
  }
  return 0;
}
