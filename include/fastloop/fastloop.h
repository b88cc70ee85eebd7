// fastloop's public C++ API: what a LibTorch program (and fastloop's own Python binding) uses. One include
// gives the whole of it; `cmake --install` ships this header and the headers it reaches, nothing else.
//
//   #include <fastloop/fastloop.h>
//   fastloop::TrainConfig config;                     // every setting, documented in core/config.h
//   config.data.source = "imagefolder:photos";
//   fastloop::TrainSummary summary = fastloop::train(config);
//
// - Settings: TrainConfig (core/config.h), set by TOML key (core/config_set.h).
// - Training: train() and its summary (train/trainer.h); `fastloop train` as a call, with your own model
//   registered by name (models/registry.h, run/train_main.h); checkpoints (train/checkpoint.h).
// - Data: a --data source's splits (data/sources/source.h) and the threaded Loader (data/loader/loader.h),
//   with the options `fastloop train` and evaluation use (train/setup.h, train/evaluate.h, train/perf_auto.h);
//   video clips (data/sources/video_clips.h, data/codecs/video_frames.h, data/transforms/video_batch.h);
//   COCO detection targets (data/targets/coco_annotations.h) and images (data/sources/coco_images.h);
//   torchvision-named transform pipelines, parsed and compiled (data/transforms/spec.h, transform.h, pipeline.h).
// - Trained models: evaluation, prediction and export as calls (run/eval_run.h, run/predict_run.h,
//   run/export_run.h), a checkpoint's ModelInfo (models/model_info.h), TorchScript models (models/torchscript.h);
//   tensors in safetensors files (io/safetensors_tensors.h).
// - Errors: InputError and RunError (core/errors.h); exit codes for your own command line (run/exit_code.h).
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/core/config_set.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/codecs/video_frames.h"
#include "fastloop/data/loader/loader.h"
#include "fastloop/data/sources/arrow_images.h"
#include "fastloop/data/sources/class_map_files.h"
#include "fastloop/data/sources/coco_images.h"
#include "fastloop/data/sources/coco_targets.h"
#include "fastloop/data/sources/csv_files.h"
#include "fastloop/data/sources/field_shards.h"
#include "fastloop/data/sources/field_values.h"
#include "fastloop/data/sources/flagged_images.h"
#include "fastloop/data/sources/http_fetch.h"
#include "fastloop/data/sources/image_parts.h"
#include "fastloop/data/sources/mixture_images.h"
#include "fastloop/data/sources/remote_shards.h"
#include "fastloop/data/sources/remote_video_clips.h"
#include "fastloop/data/sources/sample_files.h"
#include "fastloop/data/sources/shards.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/data/sources/video_clips.h"
#include "fastloop/data/targets/coco_annotations.h"
#include "fastloop/data/transforms/crop_views.h"
#include "fastloop/data/transforms/detection_transforms.h"
#include "fastloop/data/transforms/float_ops.h"
#include "fastloop/data/transforms/pipeline.h"
#include "fastloop/data/transforms/registry.h"
#include "fastloop/data/transforms/spec.h"
#include "fastloop/data/transforms/split_size.h"
#include "fastloop/data/transforms/transform.h"
#include "fastloop/data/transforms/video_batch.h"
#include "fastloop/data/transforms/views.h"
#include "fastloop/io/safetensors_tensors.h"
#include "fastloop/models/model_info.h"
#include "fastloop/models/registry.h"
#include "fastloop/models/torchscript.h"
#include "fastloop/run/eval_run.h"
#include "fastloop/run/exit_code.h"
#include "fastloop/run/export_run.h"
#include "fastloop/run/predict_run.h"
#include "fastloop/run/train_main.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/evaluate.h"
#include "fastloop/train/perf_auto.h"
#include "fastloop/train/setup.h"
#include "fastloop/train/trainer.h"
#include "fastloop/version.h"
