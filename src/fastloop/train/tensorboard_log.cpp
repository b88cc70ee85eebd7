// Tags: train/* per log interval, test/* per epoch, amp/loss_scale under fp16; x axis: optimizer steps.
#include "fastloop/train/tensorboard_log.h"

namespace fastloop {

TensorBoardLog::TensorBoardLog(const std::string& dir, int64_t start_step) {
  if (!dir.empty()) writer_ = std::make_unique<TensorBoardWriter>(dir, start_step);
}

void TensorBoardLog::step(const StepReport& r, double data_wait_share, double loss_scale) {
  if (!writer_) return;
  writer_->scalar("train/loss", r.train_loss, r.step);
  writer_->scalar("train/lr", r.lr, r.step);
  writer_->scalar("train/img_per_s", r.img_per_s, r.step);
  writer_->scalar("train/data_wait_share", data_wait_share, r.step);
  if (loss_scale > 0) writer_->scalar("amp/loss_scale", loss_scale, r.step);
  writer_->flush();
}

void TensorBoardLog::epoch(const EpochReport& r) {
  if (!writer_) return;
  if (r.evaluated) writer_->scalar("test/loss", r.test_loss, r.step), writer_->scalar("test/accuracy", r.test_acc, r.step);
  writer_->scalar("train/epoch_loss", r.train_loss, r.step);
  writer_->flush();
}

} // namespace fastloop
