// One setup for every run. `fastloop train`, the bench's cells and (through train) the tuner's trials
// turn a TrainConfig, a device and an optional process group into what a run needs here, and nowhere
// else: a capability added to a run is added once, in train_setup().
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/data/sources/dataset.h"
#include "fastloop/data/loader/loader.h"
#include "fastloop/dist/ddp.h"
#include "fastloop/models/classifier.h"
#include "fastloop/models/model_info.h"
#include "fastloop/train/amp.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/ema.h"
#include "fastloop/train/evaluate.h"
#include "fastloop/train/loader_state.h"
#include "fastloop/train/lookahead.h"
#include "fastloop/train/mixup.h"
#include "fastloop/train/step.h"

#include <c10/core/Device.h>
#include <torch/optim/optimizer.h>

#include <memory>
#include <vector>
#include <string>

namespace fastloop {

class ProcessGroup;

struct TrainSetup {
  TrainConfig config;
  c10::Device device = c10::kCPU;
  std::shared_ptr<ProcessGroup> group;            // null: one process
  AmpPolicy amp;                                  // from config.perf.amp, the one place it is derived
  Classifier model;                               // on `device`, in its memory format, initialised or restored
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::vector<double> lr_scales;                  // per optimizer group: its multiple of the schedule's LR
  GradScaler scaler;                              // enabled for fp16; cross-rank inf/nan check with a group
  StepOptions step;
  LoaderOptions train_loader;                     // this rank's share, batches as the step wants them
  EvalOptions eval;                               // evaluation under the same device, dtype and layout
  std::unique_ptr<DistributedDataParallel> ddp;   // with a group: made after the restore, from rank 0's state
  std::unique_ptr<ModelEma> ema;                  // --ema-decay: the weights' moving average; null when off
  std::unique_ptr<Lookahead> lookahead;           // --lookahead-steps: the slow weights; null when off
  Mixup mixup{MixupOptions()};                    // --mixup / --cutmix (enabled() false when both are 0)
  TrainPosition position;                         // where --resume continues; zero otherwise
  EpochPosition loader_start;                     // where --resume continues position.epoch's order; {} otherwise
  LoaderIdentity loader_identity;                 // the train loader's, checked on --resume and saved with it
  bool resumed = false;                           // restored from `checkpoint` (--resume on, or auto that found it)
  std::string checkpoint;                         // the run's checkpoint file; empty without --checkpoint-dir
  ModelInfo info;                                 // class names and evaluation transform, for checkpoints

  int64_t world_size() const;
  bool main_rank() const { return world_size() == 1 || rank() == 0; }  // the rank that logs and writes files
  int64_t rank() const;
};

/// Whether the train split's flips alternate (--alternate-flip). It is a rule of the built-in flip of in-memory
/// data (augment.h's flip_decide). Image files and shards, and any --transform, run through the transform
/// pipeline, whose RandomHorizontalFlip draws each epoch's flip afresh: there `on` is refused (InputError)
/// rather than silently dropped, and `auto` (the default) flips at random.
bool alternate_flips(const TrainConfig& config, const Dataset& train);

/// The training split's loader of a run: batches of config.data's size, augmentation and seed, rank
/// `rank` of `world_size`'s share of each epoch, delivered on `device` in `dtype` (the dtype autocast
/// computes in) and the run's memory format; on CUDA through the pinned ring (--pin-memory), or all on
/// the device with --data-on-device. train_setup() and fastloop.Loader both take their options from here, and
/// set augment.alternate_flip from alternate_flips() (which needs the data).
LoaderOptions train_loader_options(const TrainConfig& config, int64_t rank, int64_t world_size, c10::Device device,
                                   at::ScalarType dtype);

/// Validates `config`, applies its runtime settings (threads, cuDNN, TF32), builds the model for `train`'s
/// channels and classes (seeded with config.run.seed), loads --init-from, whitens and freezes its stem
/// (--whiten-stem: computed on a fresh run only, train/stem_whitening.h), sets its BatchNorms (--bn-momentum,
/// --bn-weight-frozen), makes the optimizer, scaler and Lookahead, restores --resume's checkpoint (checking that
/// its loader state fits this run's data: train/loader_state.h), then wraps the model in DDP on `group`.
TrainSetup train_setup(const TrainConfig& config, const Dataset& train, c10::Device device,
                       std::shared_ptr<ProcessGroup> group);

} // namespace fastloop
