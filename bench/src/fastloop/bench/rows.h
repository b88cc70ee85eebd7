// What each row of the bench grid switches: the plan of one cell (a model under a row's technique),
// built from the seed's baseline settings, and the data and stem the cells run on. Internal to the bench;
// grid.cpp and the multi-rank cells (dist_cell.cpp) build their cells from it.
#pragma once

#include "fastloop/bench/cell_timer.h"
#include "fastloop/bench/result.h"

#include <optional>
#include <string>

namespace fastloop {

/// The grid's data: options.data, image folders and shards cropped to options.image_size pixels.
DatasetSplits bench_data_load(const BenchOptions& options);

/// The stem of `model`'s cells: options.stem, or for "auto" the imagenet stem on image folders and shards
/// (photographs at --image-size; the cifar stem for a model that has no other, small_cnn) and the cifar
/// stem on data held in memory (CIFAR-sized images). A stem other than auto, cifar or imagenet: InputError.
std::string bench_stem(const BenchOptions& options, const std::string& model, const DatasetSplits& data);

/// Every row name in report order: baseline, workers4, workers8, non-blocking, rec-model, amp,
/// set-to-none, accumulate, no-grad, cudnn-benchmark, channels-last, fused-optim, cuda-graph,
/// data-on-device, fold-bn, perf-auto.
std::vector<std::string> bench_row_names();

/// "row: what it switches" for a name of bench_row_names().
std::string bench_row_description(const std::string& row);

/// The cell of `row` for `model` with `nproc` ranks: the baseline config from `options` (batch per rank),
/// then the row's technique. `na` is set to "n/a: why" when the row cannot run here.
CellPlan bench_cell_plan(const BenchOptions& options, const std::string& model, const std::string& row,
                         c10::Device device, int64_t threads, int64_t nproc, const DatasetSplits& data,
                         std::optional<std::string>& na);

} // namespace fastloop
