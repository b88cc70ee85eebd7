// Progress bar and periodic lines.
#include "fastloop/train/metrics.h"

#include <unistd.h>

#include <cmath>

namespace fastloop {

namespace {
std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const auto s = static_cast<int64_t>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  return buf;
}
}  // namespace

Progress::Progress(bool enabled) : enabled_(enabled), terminal_(::isatty(STDOUT_FILENO) == 1) {}

void Progress::step(const StepReport& r) {
  if (!enabled_) return;
  const double done = static_cast<double>(r.epoch * r.batches + r.batch);
  const double total = static_cast<double>(r.epochs * r.batches);
  const double eta = done > 0 ? r.elapsed_s * (total - done) / done : NAN;
  if (terminal_) {
    auto now = std::chrono::steady_clock::now();
    if (now - last_draw_ < std::chrono::milliseconds(200) && r.batch != r.batches) return;
    last_draw_ = now;
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(kWidth * r.batch / std::max<int64_t>(r.batches, 1));
    std::printf("\r\033[Kepoch %lld/%lld [%s%s] %lld/%lld loss %.4f %.0f img/s ETA %s",
                static_cast<long long>(r.epoch + 1), static_cast<long long>(r.epochs),
                std::string(static_cast<size_t>(filled), '=').c_str(),
                std::string(static_cast<size_t>(kWidth - filled), ' ').c_str(), static_cast<long long>(r.batch),
                static_cast<long long>(r.batches), r.train_loss, r.img_per_s, format_duration(eta).c_str());
  } else {
    std::printf("epoch %lld/%lld step %lld/%lld loss %.4f lr %.4g %.0f img/s elapsed %s ETA %s\n",
                static_cast<long long>(r.epoch + 1), static_cast<long long>(r.epochs),
                static_cast<long long>(r.batch), static_cast<long long>(r.batches), r.train_loss, r.lr, r.img_per_s,
                format_duration(r.elapsed_s).c_str(), format_duration(eta).c_str());
  }
  std::fflush(stdout);
}

void Progress::epoch(const EpochReport& r, int64_t epochs) {
  if (!enabled_) return;
  char test[96] = "";
  if (r.evaluated)
    std::snprintf(test, sizeof(test), " test_loss %.4f test_acc %.2f%%%s", r.test_loss, 100.0 * r.test_acc,
                  r.tta == "off" ? "" : (" (" + r.tta + " TTA)").c_str());
  std::printf("%sepoch %lld/%lld train_loss %.4f%s %.0f img/s elapsed %s\n", terminal_ ? "\r\033[K" : "",
              static_cast<long long>(r.epoch + 1), static_cast<long long>(epochs), r.train_loss, test, r.img_per_s,
              format_duration(r.elapsed_s).c_str());
  std::fflush(stdout);
}

} // namespace fastloop
