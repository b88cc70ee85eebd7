// The messages of training runs that cannot go on: a loss that became inf/nan, steps skipped again
// and again, a batch that does not fit in memory. Each names where the run stopped, the last good
// checkpoint and what to change; the trainer throws them as RunError.
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/train/checkpoint.h"

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <string>

namespace fastloop {

/// The last checkpoint this run wrote or resumed from; an empty path: none.
struct SavedCheckpoint {
  std::string path;
  int64_t step = 0;
};

std::string nonfinite_loss_message(const TrainPosition& position, const SavedCheckpoint& last_saved);

std::string skipped_steps_message(const TrainPosition& position, int64_t skipped, bool amp_scaler,
                                  const SavedCheckpoint& last_saved);

/// True for CUDA's OutOfMemoryError and for the CPU allocator's "can't allocate memory" (a plain c10::Error).
bool is_out_of_memory(const c10::Error& error);

/// `allocator_message`: what the allocator said (it names the bytes it could not get).
std::string out_of_memory_message(const TrainConfig& config, const at::Tensor& images,
                                  const std::string& allocator_message);

} // namespace fastloop
