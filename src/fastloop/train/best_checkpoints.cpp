// Best-k checkpoints: ranking by the accuracy written in each file's name.
#include "fastloop/train/best_checkpoints.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace fastloop {

BestCheckpoints::BestCheckpoints(std::string dir, int64_t keep, bool resume) : dir_(std::move(dir)), keep_(keep) {
  if (keep_ <= 0) return;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, error)) {
    const std::string file = entry.path().filename().string();
    int epoch = 0;
    double percent = 0.0;
    char tail[8] = {};
    if (std::sscanf(file.c_str(), "best-epoch%d-acc%lf.%7s", &epoch, &percent, tail) == 3 && std::string(tail) == "ckpt")
      kept_.push_back({percent / 100.0, entry.path().string()});
  }
  if (!resume) {  // a new run in this folder: the earlier run's best files go, as its last.ckpt will
    for (const auto& e : kept_) std::filesystem::remove(e.path, error);
    kept_.clear();
  }
  std::stable_sort(kept_.begin(), kept_.end(), [](const Entry& a, const Entry& b) { return a.accuracy > b.accuracy; });
}

std::string BestCheckpoints::name(int64_t epoch, double accuracy) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "best-epoch%lld-acc%.2f.ckpt", static_cast<long long>(epoch + 1), 100.0 * accuracy);
  return buf;
}

bool BestCheckpoints::offer(double accuracy, int64_t epoch, const std::function<void(const std::string&)>& save) {
  if (keep_ <= 0) return false;
  if (static_cast<int64_t>(kept_.size()) >= keep_ && accuracy <= kept_.back().accuracy) return false;
  const std::string path = dir_ + "/" + name(epoch, accuracy);
  save(path);
  kept_.erase(std::remove_if(kept_.begin(), kept_.end(), [&](const Entry& e) { return e.path == path; }), kept_.end());
  const auto at = std::find_if(kept_.begin(), kept_.end(), [&](const Entry& e) { return e.accuracy < accuracy; });
  kept_.insert(at, {accuracy, path});
  while (static_cast<int64_t>(kept_.size()) > keep_) {
    std::error_code ignored;
    std::filesystem::remove(kept_.back().path, ignored);
    kept_.pop_back();
  }
  return true;
}

std::vector<std::string> BestCheckpoints::files() const {
  std::vector<std::string> out;
  for (const auto& e : kept_) out.push_back(e.path);
  return out;
}

} // namespace fastloop
