// video_frames.h on FFmpeg: the process's frame indices (video_index.h) and a thread's VideoReader.
#include "fastloop/data/codecs/video_frames.h"

#include "fastloop/data/codecs/ffmpeg_library.h"
#include "fastloop/data/codecs/video_index.h"
#include "fastloop/data/codecs/video_reader.h"

namespace fastloop {

VideoInfo video_info(const std::string& path) {
  const std::shared_ptr<const VideoIndex> index = video_index(path);
  VideoInfo info;
  info.frames = index->frames();
  info.height = index->height, info.width = index->width;
  info.codec = index->codec;
  for (int64_t pts : index->pts) info.pts_seconds.push_back(index->seconds(pts));
  return info;
}

std::string video_libraries() {
  ffmpeg_library();
  return ffmpeg_versions();
}

VideoFrameReader::VideoFrameReader() : reader_(std::make_unique<VideoReader>()) {}
VideoFrameReader::~VideoFrameReader() = default;

void VideoFrameReader::read(const std::string& path, const std::vector<int64_t>& frames, std::vector<ImageU8>& out) {
  reader_->read(*video_index(path), frames, out);
}

int64_t VideoFrameReader::frame_count(const std::string& path) { return video_index(path)->frames(); }
int64_t VideoFrameReader::seeks() const { return reader_->seeks(); }
int64_t VideoFrameReader::frames_decoded() const { return reader_->frames_decoded(); }

} // namespace fastloop
