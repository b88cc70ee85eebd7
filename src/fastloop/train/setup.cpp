// train_setup(): the one mapping from TrainConfig to a run's model, optimizer, AMP, step, loaders and DDP.
#include "fastloop/train/setup.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/transforms/pipeline.h"
#include "fastloop/dist/process_group.h"
#include "fastloop/io/weights.h"
#include "fastloop/models/fold_bn.h"
#include "fastloop/models/init.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/batchnorm_configure.h"
#include "fastloop/train/optim.h"
#include "fastloop/train/runtime.h"
#include "fastloop/train/stem_whitening.h"
#include "fastloop/train/tta.h"
#include "fastloop/train/video_run.h"

#include <torch/utils.h>

#include <cstdio>
#include <filesystem>

namespace fastloop {

namespace {

StepOptions step_options_for(const TrainConfig& config, const AmpPolicy& amp) {
  StepOptions step;
  step.label_smoothing = config.optim.label_smoothing;
  step.amp = amp;
  step.set_to_none = config.perf.set_to_none;
  step.clip_grad_norm = config.optim.clip_grad_norm;
  // With --mixup/--cutmix the smoothing is folded into the soft targets (timm's mixup_target), not the loss.
  if (config.data.mixup > 0 || config.data.cutmix > 0) step.label_smoothing = 0.0;
  return step;
}

EvalOptions eval_options_for(const TrainConfig& config, const TrainSetup& setup) {
  EvalOptions options;
  options.device = setup.device;
  options.channels_last = config.perf.channels_last;
  options.amp = setup.amp;
  options.pin_memory = config.data.pin_memory;
  options.fold_bn = config.perf.fold_bn;
  options.tta = tta_mode(config.data);
  options.fast_decode = config.data.decode == "fast";
  options.group = setup.group.get();
  if (!config.data.eval_transform.empty()) options.transform = std::make_shared<const Pipeline>(config.data.eval_transform);
  return options;
}

/// Where the checkpoint's epoch goes on in its global order: its loader state's position, once the state is
/// found to fit this run's data; for a file written before checkpoints carried one, its batch of the ranks
/// that wrote it (`written`: its config).
EpochPosition resume_start(const Checkpoint& saved, const TrainConfig& written, const TrainSetup& setup) {
  if (saved.loader_state_json().empty()) {
    const int64_t ranks = written.dist.world_size > 0 ? written.dist.world_size : setup.world_size();
    return {saved.position().batch * written.data.batch_size * ranks, ranks};
  }
  const LoaderState state = loader_state_from_json(saved.loader_state_json(), setup.checkpoint);
  const std::vector<std::string> differ = loader_identity_differences(state.identity, setup.loader_identity);
  if (!differ.empty()) {
    std::string list;
    for (const auto& line : differ) list += (list.empty() ? "" : "; ") + line;
    throw InputError(setup.checkpoint + ": its loader state does not fit this run's data: " + list +
                     ". Resume with the --data, --seed and --batch-size it was written with, or train afresh with "
                     "another --checkpoint-dir (this checkpoint is left as it is)");
  }
  if (setup.config.data.on_device && state.position.order_world_size != setup.world_size())
    throw InputError(setup.checkpoint + " was written by " + std::to_string(state.position.order_world_size) +
                     " ranks; --data-on-device resumes on as many (now " + std::to_string(setup.world_size()) +
                     "): resume on that many, or without --data-on-device");
  if (state.epoch != saved.position().epoch)
    throw InputError(setup.checkpoint + ": its loader state is at epoch " + std::to_string(state.epoch) +
                     ", its run at epoch " + std::to_string(saved.position().epoch) +
                     "; this checkpoint is damaged: use an earlier one or train again");
  return state.position;
}

/// --resume: model, optimizer, scaler, RNG and position from the run's checkpoint; on as many ranks as wrote
/// it or another number, which share the rest of its epoch (each sample once).
void resume(TrainSetup& setup) {
  auto saved = Checkpoint::read(setup.checkpoint);
  TrainConfig written;
  config_from_json(written, saved.config_json());
  setup.loader_start = resume_start(saved, written, setup);  // checked before anything is restored
  saved.restore(*setup.model, setup.optimizer.get(), /*rng=*/true, &setup.scaler);
  setup.position = saved.position();
  if (setup.ema && saved.has_ema()) saved.restore_ema(setup.ema->module());
  if (setup.ema && !saved.has_ema()) setup.ema->set(*setup.model);  // --ema-decay added on resume: start here
  if (setup.lookahead && !saved.restore_lookahead(*setup.lookahead))
    setup.lookahead->set(*setup.model);  // --lookahead-steps added on resume: the slow weights start here
  std::printf("resumed from %s at epoch %lld, step %lld", setup.checkpoint.c_str(),
              static_cast<long long>(setup.position.epoch + 1), static_cast<long long>(setup.position.step));
  if (setup.loader_start.order_world_size != setup.world_size())
    std::printf(" (written by %lld ranks, %lld samples of the epoch taken: these %lld share the rest)",
                static_cast<long long>(setup.loader_start.order_world_size),
                static_cast<long long>(setup.loader_start.taken), static_cast<long long>(setup.world_size()));
  std::printf("\n");
}

}  // namespace

bool alternate_flips(const TrainConfig& config, const Dataset& train) {
  if (config.data.alternate_flip == "off" || !config.data.augment || !config.data.flip) return false;
  std::string which;
  if (!config.data.transform.empty()) which = "a --transform pipeline (" + config.data.transform + ")";
  else if (train.encoded)
    which = "image files and shards (" + config.data.source + "), which run through the built-in transform pipeline";
  if (which.empty()) return true;
  if (config.data.alternate_flip == "auto") return false;
  throw InputError("--alternate-flip is not supported with " + which + ": it alternates the built-in flip of in-memory "
                   "data sets (IDX, CIFAR, synthetic) only, and a pipeline's RandomHorizontalFlip draws each epoch's "
                   "flip at random. Give --alternate-flip off or auto (data.alternate_flip) to flip at random each epoch");
}

LoaderOptions train_loader_options(const TrainConfig& config, int64_t rank, int64_t world_size, c10::Device device,
                                   at::ScalarType dtype) {
  LoaderOptions options;
  options.batch_size = config.data.batch_size;
  options.workers = config.data.workers;
  options.prefetch = config.data.prefetch;
  options.augment.crop = config.data.augment;
  options.augment.pad = config.data.crop_pad;
  options.augment.flip = config.data.augment && config.data.flip;
  options.augment.erase = config.data.augment ? config.data.random_erasing : 0.0;
  options.augment.fast_decode = config.data.decode == "fast";
  options.sampler.seed = static_cast<uint64_t>(config.run.seed);
  options.sampler.rank = rank;
  options.sampler.world_size = world_size;
  options.device = device;
  options.dtype = dtype;
  options.channels_last = config.perf.channels_last;
  options.pin_memory = config.data.pin_memory;
  options.on_device = config.data.on_device;
  if (!config.data.transform.empty()) options.augment.pipeline = std::make_shared<const Pipeline>(config.data.transform);
  return options;
}

int64_t TrainSetup::world_size() const { return group ? group->size() : 1; }
int64_t TrainSetup::rank() const { return group ? group->rank() : 0; }

TrainSetup train_setup(const TrainConfig& config, const Dataset& train, c10::Device device,
                       std::shared_ptr<ProcessGroup> group) {
  const bool alternate = alternate_flips(config, train);
  const bool video = split_is_video(train);
  if (video) video_run_check(config);
  const bool channels_last = config.perf.channels_last && !video;  // clip batches are 5-D: contiguous
  runtime_apply(config.perf, config.run.threads);
  TrainSetup setup;
  setup.config = config;
  setup.device = device;
  setup.group = std::move(group);
  setup.info = model_info_for(config, train);
  setup.amp = amp_policy(config.perf.amp);
  if (!config.run.checkpoint_dir.empty()) setup.checkpoint = checkpoint_path_in(config.run.checkpoint_dir);
  setup.resumed = config.run.resume == "on" || (config.run.resume == "auto" && std::filesystem::exists(setup.checkpoint));

  torch::manual_seed(static_cast<uint64_t>(config.run.seed));
  setup.model = model_make_for(config.model, train.channels(), train.num_classes);
  if (config.model.dirac_init && init_convs_dirac(*setup.model) == 0)
    throw InputError("--dirac-init: model '" + config.model.name + "' has no convolution fastloop can reach (a "
                     "TorchScript model's layers are a compiled graph); drop the flag");
  if (!config.run.init_from.empty()) {  // before the optimizer, so it starts from these weights
    const auto report = model_state_load_file(*setup.model, config.run.init_from, !config.run.init_non_strict,
                                              config.run.init_skip);
    std::printf("initialised %zu tensors from %s (%s)\n", report.loaded, config.run.init_from.c_str(),
                state_load_summary(report).c_str());
  }
  if (whiten_stem_on(config.model))  // before the optimizer: the frozen stem in no group; --resume, --init-from bring theirs
    stem_whitening_configure(*setup.model, train, config.model.name, config.run.init_from.empty() && !setup.resumed);
  setup.model->to(device);
  if (channels_last) module_to_channels_last(*setup.model);
  const int64_t classes = config.model.num_classes ? config.model.num_classes : train.num_classes;
  if (video)  // a clip of the run's size, as the loader makes them
    model_check_forward(*setup.model, config.model.name, video_clip_shape(train), classes,
                        at::MemoryFormat::Contiguous, video_model_input(train));
  else if (!model_is_builtin(config.model.name))  // a TorchScript or registered model: one probe before any work
    model_check_forward(*setup.model, config.model.name, {train.channels(), train.height(), train.width()}, classes,
                        channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous);
  if (config.perf.fold_bn) fold_bn_require(*setup.model);  // refused at the start, not at the first evaluation
  const BatchNormSettings batchnorm{config.model.bn_weight_frozen, config.model.bn_momentum};
  batchnorm_configure(*setup.model, batchnorm, config.model.name);  // before the optimizer: frozen weights in no group
  std::vector<at::Tensor> bn_biases;  // --bn-bias-lr-scale's group
  if (config.optim.bn_bias_lr_scale != 1.0) bn_biases = batchnorm_biases(*setup.model, config.model.name);
  setup.optimizer =
      optimizer_make(config.optim, setup.model->named_parameters(), config.perf.fused_optim, bn_biases);
  setup.lr_scales = optimizer_lr_scales(*setup.optimizer, config.optim, bn_biases);
  if (config.optim.lookahead_steps > 0)
    setup.lookahead = std::make_unique<Lookahead>(
        *setup.model, LookaheadOptions().steps(config.optim.lookahead_steps).alpha(config.optim.lookahead_alpha));
  if (config.optim.ema_decay > 0) {  // a second model of the same architecture holds the average
    Classifier average = model_make_for(config.model, train.channels(), train.num_classes);
    average->to(device);
    if (channels_last) module_to_channels_last(*average);
    batchnorm_configure(*average, batchnorm, config.model.name);  // the same BatchNorms as the model's
    setup.ema = std::make_unique<ModelEma>(average, *setup.model,
                                           EmaOptions().decay(config.optim.ema_decay).warmup(config.optim.ema_warmup));
  }
  setup.mixup = Mixup(MixupOptions()
                          .mixup_alpha(config.data.mixup)
                          .cutmix_alpha(config.data.cutmix)
                          .label_smoothing(config.optim.label_smoothing)
                          .num_classes(config.model.num_classes ? config.model.num_classes : train.num_classes)
                          .seed(static_cast<uint64_t>(config.run.seed)));
  setup.scaler = GradScaler(GradScalerOptions().enabled(setup.amp.grad_scaling));
  setup.step = step_options_for(config, setup.amp);
  setup.train_loader = train_loader_options(config, setup.rank(), setup.world_size(), device, setup.amp.dtype);
  setup.train_loader.augment.alternate_flip = alternate;
  setup.train_loader.channels_last = channels_last;
  setup.eval = eval_options_for(config, setup);
  setup.eval.channels_last = channels_last;
  setup.loader_identity = loader_identity_of(config, train, setup.train_loader);
  if (setup.resumed) resume(setup);
  else if (config.run.resume == "auto" && setup.main_rank())
    std::printf("--resume auto: no %s yet, starting fresh\n", setup.checkpoint.c_str());

  // After the restore: every rank starts from rank 0's parameters and buffers (broadcast).
  if (setup.group) {
    const auto bucket_bytes = static_cast<int64_t>(config.dist.bucket_mb * 1024 * 1024);
    setup.ddp = std::make_unique<DistributedDataParallel>(
        *setup.model, setup.group,
        DdpOptions().bucket_bytes(bucket_bytes).broadcast_buffers(config.dist.broadcast_buffers));
    auto reduce_group = setup.group;  // every rank skips the same steps
    setup.scaler.set_found_inf_reduce(
        [reduce_group](at::Tensor& found) { reduce_group->allreduce(found, "AMP inf/nan check", true); });
    if (setup.lookahead) setup.lookahead->sync(*setup.group);  // the slow weights of the parameters DDP broadcast
  }
  return setup;
}

} // namespace fastloop
