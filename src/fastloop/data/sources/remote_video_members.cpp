// The members of remote video shards (see remote_video_members.h).
#include "fastloop/data/sources/remote_video_members.h"

#include "fastloop/core/errors.h"

#include <zlib.h>

#include <cstdlib>

namespace fastloop {
namespace {

VideoSourceStamp stamp_of(const std::string& bytes) {
  const auto* data = reinterpret_cast<const Bytef*>(bytes.data());
  const uint64_t crc = crc32_z(0L, data, bytes.size());
  const uint64_t adler = adler32_z(1L, data, bytes.size());
  return {static_cast<int64_t>(bytes.size()), static_cast<int64_t>((crc << 32) | adler)};
}

}  // namespace

RemoteVideoMembers::RemoteVideoMembers(std::shared_ptr<RemoteShardImages> shards) : shards_(std::move(shards)) {
  for (size_t s = 0; s < shards_->urls().size(); ++s) shard_of_url_[shards_->urls()[s].text] = static_cast<int64_t>(s);
}

int64_t RemoteVideoMembers::video_of(const std::string& path) const {
  const size_t at = path.rfind("/#");
  const auto found = at == std::string::npos ? shard_of_url_.end() : shard_of_url_.find(path.substr(0, at));
  const std::string place = at == std::string::npos ? "" : path.substr(at + 2);
  char* end = nullptr;
  const long long k = place.empty() ? -1 : std::strtoll(place.c_str(), &end, 10);
  const std::vector<int64_t>& starts = shards_->shard_starts();
  if (found == shard_of_url_.end() || k < 0 || *end != '\0' ||
      k >= starts[static_cast<size_t>(found->second) + 1] - starts[static_cast<size_t>(found->second)])
    throw InputError(path + ": no such video among the remote shards (expected SHARD_URL/#K, K below the shard's "
                     "video count)");
  return starts[static_cast<size_t>(found->second)] + k;
}

RemoteVideoMembers::Held RemoteVideoMembers::held(int64_t video) const {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    auto found = held_.find(video);
    if (found != held_.end()) return found->second;
    if (loading_.count(video) == 0) break;
    arrived_.wait(lock);  // another thread fetches it; if that fails, this one tries (and names the error) itself
  }
  loading_.insert(video);
  lock.unlock();
  Held made;
  try {
    std::string scratch;
    shards_->bytes(video, scratch);  // the member's bytes copied into scratch
    made.bytes = std::make_shared<const std::string>(std::move(scratch));
  } catch (...) {
    lock.lock();
    loading_.erase(video);
    arrived_.notify_all();
    throw;
  }
  made.stamp = stamp_of(*made.bytes);
  lock.lock();
  loading_.erase(video);
  stamps_[video] = made.stamp;
  held_[video] = made;
  held_order_.push_back(video);
  held_bytes_ += static_cast<int64_t>(made.bytes->size());
  while (held_bytes_ > kHeldBytes && held_order_.size() > 1) {  // a reader still decoding one keeps its own reference
    auto oldest = held_.find(held_order_.front());
    held_bytes_ -= static_cast<int64_t>(oldest->second.bytes->size());
    held_.erase(oldest);
    held_order_.pop_front();
  }
  arrived_.notify_all();
  return made;
}

VideoMemberBytes RemoteVideoMembers::member_bytes(const std::string& path) const {
  Held h = held(video_of(path));
  const std::string_view view(*h.bytes);
  return {std::move(h.bytes), view};
}

VideoSourceStamp RemoteVideoMembers::member_stamp(const std::string& path) const {
  const int64_t video = video_of(path);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = stamps_.find(video);
    if (found != stamps_.end()) return found->second;
  }
  return held(video).stamp;
}

} // namespace fastloop
