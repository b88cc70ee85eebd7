// `fastloop pack csv:TRAIN.csv[::VAL.csv] OUT`: image files listed in CSV files, with their captions and other
// columns, as image-caption WebDataset shards (pack_csv.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace fastloop {

/// Packs the CSV files `spec` names (csv:TRAIN[::VAL]) into OUT/train-NNNNNN.tar (shuffled with `seed`) and
/// OUT/val-NNNNNN.tar of at most `shard_bytes`; returns the exit code. InputError for a file or row it cannot use.
int pack_csv_run(const std::string& spec, const std::string& out, int64_t shard_bytes, uint64_t seed);

}  // namespace fastloop
