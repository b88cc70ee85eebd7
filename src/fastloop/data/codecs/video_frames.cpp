// video_frames.h on FFmpeg: the process's frame indices (video_index.h) and a thread's VideoReader.
#include "fastloop/data/codecs/video_frames.h"

#include "fastloop/data/codecs/ffmpeg_library.h"
#include "fastloop/data/codecs/video_index.h"
#include "fastloop/data/codecs/video_reader.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <iterator>

namespace fastloop {

namespace {

VideoInfo info_of(const VideoIndex& index) {
  VideoInfo info;
  info.frames = index.frames();
  info.height = index.height, info.width = index.width;
  info.codec = index.codec;
  for (int64_t pts : index.pts) info.pts_seconds.push_back(index.seconds(pts));
  info.begin_seconds = index.seconds(index.pts.front());
  info.end_seconds = index.seconds(index.end);
  return info;
}

}  // namespace

VideoInfo video_info(const std::string& path) { return info_of(*video_index(path)); }

std::string video_libraries() {
  ffmpeg_library();
  return ffmpeg_versions();
}

VideoFrameReader::VideoFrameReader() = default;
VideoFrameReader::~VideoFrameReader() = default;

VideoReader& VideoFrameReader::reader_of(const std::string& path, const std::shared_ptr<const VideoIndex>& index) {
  auto found = std::find_if(readers_.begin(), readers_.end(), [&](const Open& r) { return r.path == path; });
  if (found != readers_.end() && found->index != index) {  // the file changed since it was opened
    seeks_closed_ += found->reader->seeks(), decoded_closed_ += found->reader->frames_decoded();
    readers_.erase(found);
    found = readers_.end();
  }
  if (found == readers_.end()) {
    Open made{path, index, index->height * index->width, std::make_unique<VideoReader>()};
    int64_t pixels = made.pixels;
    for (const Open& r : readers_) pixels += r.pixels;
    while (!readers_.empty() && (readers_.size() >= kOpenVideos || pixels > kOpenPixels)) {
      seeks_closed_ += readers_.back().reader->seeks(), decoded_closed_ += readers_.back().reader->frames_decoded();
      pixels -= readers_.back().pixels;
      readers_.pop_back();
    }
    readers_.push_back(std::move(made));
    found = std::prev(readers_.end());
  }
  std::rotate(readers_.begin(), found, std::next(found));  // to the front
  return *readers_.front().reader;
}

void VideoFrameReader::read(const std::string& path, const std::vector<int64_t>& frames, std::vector<ImageU8>& out) {
  const std::shared_ptr<const VideoIndex> index = video_index(path);
  reader_of(path, index).read(*index, frames, out);
}

int64_t VideoFrameReader::frame_count(const std::string& path) { return video_index(path)->frames(); }

VideoTimeline VideoFrameReader::timeline(const std::string& path) {
  const std::shared_ptr<const VideoIndex> index = video_index(path);
  static std::mutex mutex;  // the times of each file's index, made once per index
  static std::map<std::string, std::pair<std::shared_ptr<const VideoIndex>, std::shared_ptr<const VideoInfo>>> times;
  std::lock_guard<std::mutex> lock(mutex);
  auto& [indexed, info] = times[path];
  if (indexed != index) indexed = index, info = std::make_shared<const VideoInfo>(info_of(*index));
  return {info->frames, info->pts_seconds.data(), info->begin_seconds, info->end_seconds, info};
}

int64_t VideoFrameReader::seeks() const {
  int64_t n = seeks_closed_;
  for (const Open& r : readers_) n += r.reader->seeks();
  return n;
}

int64_t VideoFrameReader::frames_decoded() const {
  int64_t n = decoded_closed_;
  for (const Open& r : readers_) n += r.reader->frames_decoded();
  return n;
}

VideoIndexCounts video_index_counts() {
  const VideoIndexTally tally = video_index_tally();
  return {tally.scanned, tally.cache_read, tally.cache_written};
}

void video_index_forget() { video_index_clear(); }

} // namespace fastloop
