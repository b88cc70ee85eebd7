// Tests' helper: a few optimizer steps of a TrainSetup through the trainer's Stepper, on fixed random
// 1x12x12 batches (test_bn_tricks.cpp and test_whiten.cpp check what training changes and what it must not).
#pragma once

#include "fastloop/train/schedule.h"
#include "fastloop/train/setup.h"
#include "fastloop/train/stepper.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace fastloop::test {

/// `steps` optimizer steps of `setup` on fixed random batches, through the trainer's Stepper.
inline void train_steps(TrainSetup& setup, int64_t steps) {
  Stepper stepper(setup, LrSchedule(setup.config.schedule, setup.config.optim.lr, steps, steps), false);
  torch::manual_seed(11);
  for (int64_t s = 0; s < steps; ++s) {
    const auto images = torch::randn({16, 1, 12, 12}).contiguous(at::MemoryFormat::ChannelsLast);
    stepper.micro_step(images, torch::randint(0, 10, {16}), 0, 1);
    ASSERT_TRUE(stepper.optimizer_step(s).stepped);
  }
}

}  // namespace fastloop::test
