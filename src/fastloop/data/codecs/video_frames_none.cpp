// video_frames.h in a build without FFmpeg's headers (the GPU machine has no Debian packages): every call
// says that this build reads no video.
#include "fastloop/data/codecs/video_frames.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/codecs/video_index.h"

namespace fastloop {
namespace {
[[noreturn]] void no_video() {
  throw RunError("this fastloop was built without FFmpeg's headers and reads no video: rebuild it with "
                 "libavcodec-dev libavformat-dev libswscale-dev installed (scripts/setup.sh lists them)");
}
}  // namespace

class VideoReader {
 public:
  int64_t seeks() const { return 0; }
  int64_t frames_decoded() const { return 0; }
};

VideoInfo video_info(const std::string&) { no_video(); }
std::string video_libraries() { no_video(); }
VideoReader& VideoFrameReader::reader_of(const std::string&, const std::shared_ptr<const VideoIndex>&) { no_video(); }
VideoFrameReader::VideoFrameReader() = default;
VideoFrameReader::~VideoFrameReader() = default;
void VideoFrameReader::read(const std::string&, const std::vector<int64_t>&, std::vector<ImageU8>&) { no_video(); }
int64_t VideoFrameReader::frame_count(const std::string&) { no_video(); }
VideoTimeline VideoFrameReader::timeline(const std::string&) { no_video(); }
VideoIndexCounts video_index_counts() { return {}; }
void video_index_forget() {}
int64_t VideoFrameReader::seeks() const { return 0; }
int64_t VideoFrameReader::frames_decoded() const { return 0; }

} // namespace fastloop
