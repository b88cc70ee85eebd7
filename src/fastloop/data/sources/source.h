// Turns a data spec (the --data flag, DataConfig::source) into train and test splits.
// Forms: fashion-mnist[:DIR] | mnist:DIR | cifar10:DIR | synthetic[:CxHxW[:N]] | imagefolder:DIR | shards:... |
// csv:TRAIN.csv[::VAL.csv] | videofolder:DIR | videocsv:TRAIN.csv[::VAL.csv].
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/data/sources/data_spec.h"
#include "fastloop/data/sources/dataset.h"

#include <memory>
#include <string>
#include <vector>

namespace fastloop {

// Loads the splits a spec names:
//   fashion-mnist[:DIR]   IDX files in DIR (default /usr/share/datasets/fashion-mnist), plain or .gz
//   mnist:DIR             the same reader, same file names
//   cifar10:DIR           the binary version, in DIR or DIR/cifar-10-batches-bin
//   synthetic[:CxHxW[:N]] 10 classes, default 3x32x32 and N = 2048 train images; always 512 test images,
//                         seed 0, both splits cut from one draw so they share the class templates
//   imagefolder:DIR       DIR/train/CLASS/IMAGE and DIR/val/CLASS/IMAGE as torchvision's ImageFolder (JPEG,
//                         PNG, WebP, BMP, PPM/PGM, TIFF); without DIR/val the test split is empty (training skips evaluation)
//   shards:DIR            WebDataset tar shards DIR/train-*.tar and DIR/val-*.tar (`fastloop pack` writes them);
//   shards:TRAIN[::VAL]   or brace patterns, e.g. train-{000000..000099}.tar; without VAL no test split;
//                         the same with s3://BUCKET/... or http(s)://... URLs (data/sources/remote_shards.h)
//   csv:TRAIN[::VAL]      image files listed in CSV files (data/sources/csv_files.h): a header row, columns
//                         `path` and `label` (or exactly two columns: path, label), paths relative to the CSV
//                         file, labels all class indices or all class names (sorted, as ImageFolder's folders);
//                         VAL's labels are read against TRAIN's classes; without VAL no test split
//   videofolder:DIR       video clips (data/sources/video_sources.h): DIR/train/CLASS/VIDEO and DIR/val/CLASS/VIDEO
//                         (torchvision's Kinetics layout), or DIR/CLASS/VIDEO as the train split alone
//   videocsv:TRAIN[::VAL] video files listed in CSV files as csv: lists images
// A spec that does not parse throws InputError naming the spec and listing the forms.
DatasetSplits data_load(const std::string& spec, const DataOptions& options);
/// data_load(spec, DataOptions{}); out of line, so a caller builds no DataOptions of its own (GCC 12 warned of
/// a string of one "maybe uninitialized" where it inlined that temporary's destruction).
DatasetSplits data_load(const std::string& spec);

/// fastloop.Files: `paths` with class indices `labels` as both splits (a Loader picks train or eval behaviour by
/// its split). `classes` names the indices (empty: "0", "1", ... up to the largest label). Each path must be an
/// existing image file (InputError naming paths[i] otherwise).
DatasetSplits files_load(std::vector<std::string> paths, const std::vector<int64_t>& labels,
                         std::vector<std::string> classes, const DataOptions& options = {});

/// One split of encoded images (a Parquet file set, a Hugging Face dataset read through Arrow) as both splits,
/// as files_load makes them: `classes` names the class indices (empty: numbered up to the largest label).
/// `num_classes` > 0: the class count, the labels not read for it (a remote split's arrive with its shards).
DatasetSplits encoded_load(std::shared_ptr<const EncodedImages> images, std::vector<std::string> classes,
                           const DataOptions& options = {}, int64_t num_classes = 0);

/// data_load(config.source) with the run's image size, normalisation and bad-image policy.
DatasetSplits data_load(const DataConfig& config);

/// Whether `spec` names a set that loads decoded into memory (fashion-mnist, mnist, cifar10, synthetic): its
/// batches are copies of uint8 pixels, nothing to decode. Reads the spec's kind only; nothing is loaded.
bool data_in_memory(const std::string& spec);

/// Whether `spec` names video clips (videofolder:, videocsv:). Reads the spec's kind only.
bool data_is_video(const std::string& spec);


} // namespace fastloop
