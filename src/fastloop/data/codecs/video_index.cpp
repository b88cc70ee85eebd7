// The frame index of a video file (see video_index.h): one pass of av_read_frame over the video stream's
// packets, sorted by presentation time. A frame's keyframe group is the last keyframe packet at or before it
// in decode order; a frame shown before that keyframe (an open GOP's leading frame) starts one group earlier.
#include "fastloop/data/codecs/video_index.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/codecs/ffmpeg_library.h"
#include "fastloop/data/codecs/video_index_file.h"
#include "fastloop/data/codecs/video_input.h"
#include "fastloop/data/codecs/video_member.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>

namespace fastloop {
namespace {

struct PacketInfo {
  int64_t pts = 0, dts = 0;
  bool key = false;
  int64_t duration = 0;  // time-base units; 0 where the container gives none
};

// The frames of a stream whose packets lack presentation times (AVI, whose B-frames come out of the decoder
// with times FFmpeg guesses): decoded once, each frame's time as the reader will see it, in output order.
std::vector<PacketInfo> frames_decoded(const std::string& path) {
  const FfmpegLibrary& ff = ffmpeg_library();
  VideoInput input(path);
  input.decoder_open();
  AVFrame* frame = ff.frame_alloc();
  std::vector<PacketInfo> frames;
  const auto drain = [&] {
    while (ff.codec_receive_frame(input.codec, frame) >= 0) {
      const int64_t ts = frame_time(*frame);
      if (ts != AV_NOPTS_VALUE) frames.push_back({ts, ts - 1, frame->key_frame != 0, frame->pkt_duration});
      ff.frame_unref(frame);
    }
  };
  while (ff.read_frame(input.format, input.packet) >= 0) {
    if (input.packet->stream_index == input.stream) {
      ff.codec_send_packet(input.codec, input.packet);
      drain();
    }
    ff.packet_unref(input.packet);
  }
  ff.codec_send_packet(input.codec, nullptr);
  drain();
  ff.frame_free(&frame);
  return frames;
}

// The packets of the video stream in decode order (pts or, without one, dts).
std::vector<PacketInfo> packets_read(VideoInput& input) {
  const FfmpegLibrary& ff = ffmpeg_library();
  std::vector<PacketInfo> packets;
  bool all_pts = true;
  for (;;) {
    const int read = ff.read_frame(input.format, input.packet);
    if (read == AVERROR_EOF) break;
    if (read < 0) {
      if (packets.empty()) throw InputError(input.path + ": unreadable video (" + ffmpeg_error(read) + ")");
      break;  // a truncated or damaged tail: the frames before it are indexed, a frame after it is named if asked
    }
    const AVPacket& p = *input.packet;
    if (p.stream_index == input.stream && !(p.flags & AV_PKT_FLAG_DISCARD)) {
      all_pts = all_pts && p.pts != AV_NOPTS_VALUE;
      const int64_t dts = p.dts != AV_NOPTS_VALUE ? p.dts : p.pts;
      const int64_t pts = p.pts != AV_NOPTS_VALUE ? p.pts : p.dts;
      if (pts != AV_NOPTS_VALUE) packets.push_back({pts, dts, (p.flags & AV_PKT_FLAG_KEY) != 0, p.duration});
    }
    ff.packet_unref(input.packet);
  }
  return all_pts ? packets : frames_decoded(input.path);
}

}  // namespace

VideoIndex video_index_make(const std::string& path) {
  VideoInput input(path);
  VideoIndex index;
  index.path = path;
  index.stream = input.stream;
  index.codec = input.codec_name();
  const AVStream* stream = input.format->streams[input.stream];
  index.height = stream->codecpar->height, index.width = stream->codecpar->width;
  index.time_base_num = stream->time_base.num, index.time_base_den = stream->time_base.den;
  const std::vector<PacketInfo> packets = packets_read(input);
  if (packets.empty()) throw InputError(path + ": the video stream has no frames");
  // Per packet (decode order): the keyframe group it belongs to and that group's seek timestamp.
  std::vector<int64_t> group(packets.size()), key_ts;
  int64_t g = -1;
  for (size_t i = 0; i < packets.size(); ++i) {
    if (packets[i].key || g < 0) {
      ++g;
      key_ts.push_back(std::min(packets[i].pts, packets[i].dts));  // at or before it whether the demuxer seeks by pts or dts
    }
    group[i] = g;
  }
  std::vector<size_t> order(packets.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return packets[a].pts < packets[b].pts; });
  std::vector<int64_t> group_pts(key_ts.size());  // each group's keyframe pts
  for (size_t i = 0; i < packets.size(); ++i)
    if (i == 0 || group[i] != group[i - 1]) group_pts[group[i]] = packets[i].pts;
  for (const PacketInfo& packet : packets) index.end = std::max(index.end, packet.pts + packet.duration);
  for (size_t k : order) {
    int64_t start = group[k];
    if (start > 0 && packets[k].pts < group_pts[start]) --start;  // shown before its keyframe: open GOP
    index.pts.push_back(packets[k].pts);
    index.start_group.push_back(start);
    index.start_key.push_back(key_ts[start]);
  }
  // Decoding from group s reaches every later frame: a frame's start group never exceeds a later frame's.
  for (size_t i = index.start_group.size(); i-- > 1;)
    if (index.start_group[i - 1] > index.start_group[i])
      index.start_group[i - 1] = index.start_group[i], index.start_key[i - 1] = index.start_key[i];
  return index;
}

namespace {

struct Indexed {
  std::optional<VideoSourceStamp> stamp;
  std::shared_ptr<const VideoIndex> index;
};

struct Indices {  // the process's, as libcurl's handle
  std::mutex mutex;
  std::map<std::string, Indexed> by_path;
  std::atomic<int64_t> scanned{0}, cache_read{0}, cache_written{0};
};

Indices& indices() {
  static Indices made;
  return made;
}

}  // namespace

std::shared_ptr<const VideoIndex> video_index(const std::string& path) {
  Indices& all = indices();
  const std::optional<VideoSourceStamp> stamp = video_stamp(path);  // a shard member's: its shard's
  {
    std::lock_guard<std::mutex> lock(all.mutex);
    auto found = all.by_path.find(path);
    if (found != all.by_path.end() && found->second.stamp == stamp) return found->second.index;
  }
  std::optional<VideoIndex> cached = stamp ? video_index_cache_read(path, *stamp) : std::nullopt;
  if (cached) {
    ++all.cache_read;
  } else {
    cached = video_index_make(path);
    ++all.scanned;
    if (stamp && video_index_cache_write(*cached, path, *stamp)) ++all.cache_written;
  }
  auto made = std::make_shared<const VideoIndex>(std::move(*cached));
  std::lock_guard<std::mutex> lock(all.mutex);
  Indexed& entry = all.by_path[path];
  if (entry.stamp != stamp || !entry.index) entry = {stamp, std::move(made)};
  return entry.index;
}

VideoIndexTally video_index_tally() {
  const Indices& all = indices();
  return {all.scanned.load(), all.cache_read.load(), all.cache_written.load()};
}

void video_index_clear() {
  Indices& all = indices();
  std::lock_guard<std::mutex> lock(all.mutex);
  all.by_path.clear();
}

} // namespace fastloop
