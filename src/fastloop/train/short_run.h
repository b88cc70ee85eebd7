// --short-run auto: what a time-budgeted run of small_cnn changes when few epochs fit (a slow machine). The
// default recipe was tuned where 7-16 epochs fit; on a 2-core AVX2 EPYC 2.6 epochs of it fit in 300 s and it
// ended at 92.2%. There, each epoch's work is cut and the schedule fitted to few epochs where the measurements
// said it pays (bench/results/cpu-2core/recipe94/short_run): the plan times the changed model and plans again.
#pragma once

#include "fastloop/core/config.h"

#include <string>

namespace fastloop {

/// Below this many epochs of the recipe's own model, --short-run auto changes the work per epoch. At 7 and
/// more (the Xeons) the recipe runs as tuned, unchanged bit for bit.
constexpr double kShortRunEpochs = 5.0;

/// Whether `config` (already planned to `epochs` epochs by its time budget) takes the short-run settings:
/// --short-run auto, small_cnn, fewer than kShortRunEpochs epochs, and each setting it changes still the
/// recipe's (no --pool-before-bn, --lr 0.1, --label-smoothing 0.05): a run that moved one keeps all of its own.
bool short_run_applies(const TrainConfig& config, double epochs);

/// `config` with the short-run settings (short_run_applies decides whether).
TrainConfig short_run_config(const TrainConfig& config);

/// The flags short_run_config sets, as the replay of a short run's plan gives them (" --pool-before-bn").
std::string short_run_flags();

/// One line for the run's output: "short run: 2.6 epochs of the recipe fit (fewer than 5): ...".
std::string short_run_line(double epochs);

} // namespace fastloop
