// libFuzzer target for video files through FFmpeg (opened at run time, uninstrumented) and fastloop's own code
// around it, instrumented: the frame index made from the demuxed packets (data/codecs/video_index.h) and the
// frame-exact reader's seeks and decode loop (video_reader.h), from a file and from a tar shard's member (the
// AVIOContext's read and seek over the shard's mapping, video_input.cpp). Any bytes index or throw InputError, and
// every frame the index lists decodes or throws InputError naming it: never a crash, a hang or a read out of bounds.
// Seeded with small H.264, VP9, MPEG-4 and AV1 files made by the ffmpeg CLI (tests/fuzz_corpus/video/).
#include "fastloop/core/errors.h"
#include "fastloop/data/codecs/video_index.h"
#include "fastloop/data/codecs/video_reader.h"
#include "fastloop/data/sources/tar.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// The index of `path` and two reads, as a loader's clips come: a clip across the file, then one behind it (a seek
// back). Any bytes index or throw InputError; every frame indexed decodes or throws InputError naming it.
void index_and_read(const std::string& path) {
  try {
    const fastloop::VideoIndex index = fastloop::video_index_make(path);
    if (index.frames() <= 0 || index.pts.size() != index.start_key.size()) std::abort();
    const int64_t n = index.frames();
    fastloop::VideoReader reader;
    std::vector<fastloop::ImageU8> frames;
    try {
      reader.read(index, {0, n / 2, n - 1}, frames);
      for (const fastloop::ImageU8& frame : frames)
        if (frame.channels != 3 || frame.bytes() > static_cast<int64_t>(frame.pixels.size())) std::abort();
      reader.read(index, {n / 3}, frames);
    } catch (const fastloop::InputError&) {
    }
  } catch (const fastloop::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
  static const std::string path = dir + "/fastloop-video-fuzz-" + std::to_string(getpid());
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, file) != size) std::abort();
  std::fclose(file);
  index_and_read(path);
  // The same bytes as a tar shard's member, demuxed through the AVIOContext over the shard's mapping (written
  // beside and renamed into place: a new inode, so the shard is mapped afresh)
  const std::string shard = path + ".tar";
  {
    fastloop::TarWriter writer(shard + ".part");
    writer.add("clip.mp4", std::string_view(reinterpret_cast<const char*>(data), size));
    writer.close();
  }
  if (std::rename((shard + ".part").c_str(), shard.c_str()) != 0) std::abort();
  index_and_read(shard + "/clip.mp4");
  return 0;
}
