// Messages of runs that cannot go on.
#include "fastloop/train/faults.h"

#include <sstream>

namespace fastloop {

namespace {

std::string where(const TrainPosition& position) {
  return "optimizer step " + std::to_string(position.step + 1) + " (epoch " + std::to_string(position.epoch + 1) +
         ", batch " + std::to_string(position.batch) + ")";
}

std::string checkpoint_advice(const SavedCheckpoint& last_saved) {
  if (last_saved.path.empty())
    return "No checkpoint was written before it (set --checkpoint-dir and --checkpoint-every to keep one).";
  return "The last good checkpoint is " + last_saved.path + " (after step " + std::to_string(last_saved.step) +
         "); continue from it with --resume.";
}

}  // namespace

std::string nonfinite_loss_message(const TrainPosition& position, const SavedCheckpoint& last_saved) {
  return "the loss became inf/nan at " + where(position) + "; the run stopped before applying that step. " +
         checkpoint_advice(last_saved) +
         " Lower --lr (or add warm-up), or pass --nan-policy skip to drop such steps instead.";
}

std::string skipped_steps_message(const TrainPosition& position, int64_t skipped, bool amp_scaler,
                                  const SavedCheckpoint& last_saved) {
  return std::to_string(skipped) + " optimizer steps in a row were skipped for inf/nan " +
         (amp_scaler ? "gradients (the AMP scaler backed off each time)" : "losses (--nan-policy skip)") +
         ", up to " + where(position) + ": the run does not recover. " + checkpoint_advice(last_saved) +
         " Lower --lr, try --amp bf16 or off, or raise --max-skipped-steps.";
}

bool is_out_of_memory(const c10::Error& error) {
  if (dynamic_cast<const c10::OutOfMemoryError*>(&error)) return true;
  const std::string text = error.what_without_backtrace();
  return text.find("can't allocate memory") != std::string::npos || text.find("not enough memory") != std::string::npos;
}

std::string out_of_memory_message(const TrainConfig& config, const at::Tensor& images,
                                  const std::string& allocator_message) {
  std::ostringstream out;
  out << "a training batch of " << images.size(0) << " images of " << images.sizes().slice(1) << " ("
      << images.scalar_type() << ") does not fit in " << (images.is_cuda() ? "GPU" : "host") << " memory with "
      << config.model.name << ": " << allocator_message.substr(0, allocator_message.find('\n')) << ". Use a smaller --batch-size";
  if (images.size(0) >= 2) {
    const int64_t accumulate = config.perf.accumulate * 2;
    out << ", or keep the effective batch with --batch-size " << images.size(0) / 2 << " --accumulate " << accumulate
        << " (half the images per micro-step, as many per optimizer step)";
  }
  if (config.perf.amp == "off") out << "; --amp bf16 or fp16 also halves activation memory";
  out << ".";
  return out.str();
}

} // namespace fastloop
