// TrainConfig: every setting of a run in one struct tree with documented defaults and units.
// Each field is described once in config_fields(): its flag, its TOML key, its help and allowed values.
// The CLI, TOML recipes, printing and checkpoints all go through that one table.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace fastloop {

constexpr int64_t kImageSizeDefault = 224;  // pixels: the built-in transforms' crop of image files (ImageNet's)

/// What turns an image into the model's input beside its transforms: the side of the square crop and the
/// per-channel normalisation. One struct for a run's settings (DataConfig), the data sources (DataOptions),
/// `fastloop eval` and `fastloop predict`; each says what its empty values mean.
struct ImageSettings {
  int64_t size = 0;                      // pixels, side of the square crop of image files fed to the model; 0: the
                                         // size the transform ends in, else kImageSizeDefault
  std::string mean;                      // "R,G,B" in [0, 1]; empty: the dataset's own (ImageNet's for images)
  std::string std;                       // "R,G,B"; empty: the dataset's own
};

/// `base` with each setting `given` holds (a size > 0, a mean or std not empty) in place of its own.
ImageSettings image_settings_override(ImageSettings base, const ImageSettings& given);

/// How video clips are taken from the videos of `--data videofolder:` and `videocsv:`: torchcodec's samplers, as
/// fastloop.VideoFolder's arguments name them (data/sources/video_clips.h).
struct ClipSettings {
  int64_t frames = 16;                   // num_frames_per_clip
  int64_t step = 1;                      // num_indices_between_frames: 1 takes consecutive frames
  int64_t per_video = 1;                 // num_clips: clips (samples) per video
  std::string sampler = "random";        // random | regular | random_timestamps | regular_timestamps (the train
                                         // split's; the test split takes regular positions, or random_timestamps'
                                         // draws of epoch 0)
  double seconds = 0.0;                  // the time samplers: seconds between a clip's frames; 0: 1 / average fps
  double every = 0.0;                    // regular_timestamps: seconds between clip starts (> 0)
  std::string policy = "repeat_last";    // a clip past the video's end: repeat_last | wrap | error
  std::string layout = "CTHW";           // batches [B, C, T, H, W] (torchvision's video models) | TCHW: [B, T, C, H, W]
};

struct DataConfig {
  std::string source = "fashion-mnist";  // fashion-mnist[:DIR] | mnist:DIR | cifar10:DIR | synthetic[:CxHxW]
  int64_t batch_size = 128;              // images per optimizer step (before accumulation)
  int64_t workers = 1;                   // loader threads; 0 assembles batches in the training thread
  int64_t prefetch = 4;                  // batches assembled ahead of the training step
  bool augment = true;                   // random crop + horizontal flip on the train split
  int64_t crop_pad = 0;                  // pixels of zero padding before the random crop (CIFAR: 4)
  bool flip = true;                      // random horizontal flip
  std::string alternate_flip = "auto";   // off | on | auto (on where it applies: the built-in flip of in-memory
                                         // data): each image flipped in alternate epochs (random in the first)
  double random_erasing = 0.0;           // RandomErasing probability on the train split (torchvision's box); 0: off
  std::string tta = "auto";              // test-time augmentation in the final evaluation: auto (flip for the
                                         // default recipe, where measured; else off) | off | flip | flip-translate
  bool pin_memory = true;                // CUDA: batches in a ring of pinned buffers, copied non_blocking
  bool on_device = false;                // whole uint8 dataset on the device, augmented there, no workers
  ImageSettings image;                   // image folders / shards: crop side; any data: normalisation
  std::string bad_image_policy = "stop"; // an undecodable image: stop the run, or skip it and count
  int64_t shuffle_buffer = 2048;         // shards: samples held for the streaming shuffle
  std::string cache;                     // remote shards: folder keeping fetched shards for later epochs; empty: none
  int64_t cache_size = 10240;            // MiB the cache folder may hold (least recently used shards go first)
  double timeout = 60.0;                 // remote shards: seconds without a byte before the store is taken as gone
  double mixup = 0.0;                    // mixup alpha (0: off), per batch as timm's Mixup
  double cutmix = 0.0;                   // cutmix alpha (0: off)
  std::string transform;                 // the train split's transforms, torchvision's spelling (data/transforms/spec.h); empty: the built-in
  std::string eval_transform;            // the same for evaluation (and what a checkpoint records for predict); empty: the built-in
  std::string decode = "exact";          // JPEGs: exact (full-scale decode, torchvision's pixels) | fast (at the
                                         // smallest DCT scale, 1/2 to 1/8, that covers the first resize)
  int64_t resize_min = 0;                // progressive resizing (FFCV): train batches' side in pixels at first; 0: off
  double resize_start = 0.0;             // fraction of the run's optimizer steps where the side starts to grow
  double resize_end = 0.75;              // fraction where it reaches the full side (multiples of 4 in between)
  ClipSettings clip;                     // video sources: the clips each video gives
};

struct ModelConfig {
  std::string name = "small_cnn";
  std::string stem = "cifar";            // cifar | imagenet
  int64_t num_classes = 0;               // 0: take it from the data
  int64_t width_delta = 0;               // channels added to every stage's width (bench rec-model: -1)
  int64_t depth_delta = 0;               // small_cnn: residual blocks added to each stage's one (-1: none)
  bool pool_before_bn = false;           // small_cnn: stage convs max-pooled before BN and ReLU (airbench's order)
  std::string whiten_stem = "auto";      // off | on | auto (on for small_cnn): stem conv fixed at the training
                                         // patches' whitening (airbench); whiten_stem_on() resolves it
  bool dirac_init = false;               // each conv's first min(in, out) filters start as the identity (airbench)
  bool bn_weight_frozen = false;         // every BatchNorm's weight (gamma) fixed at its initial 1, as airbench
  double bn_momentum = 0.1;              // BatchNorm running-statistics momentum, PyTorch's convention:
                                         // running = (1 - m) * running + m * batch (airbench's 0.6 is m = 0.4)
};

/// Whether the run whitens small_cnn's stem: --whiten-stem on, or auto (the default) with model small_cnn.
inline bool whiten_stem_on(const ModelConfig& model) {
  return model.whiten_stem == "on" || (model.whiten_stem == "auto" && model.name == "small_cnn");
}

struct OptimConfig {
  std::string name = "sgd";              // sgd | adamw
  double lr = 0.1;                       // peak learning rate
  double momentum = 0.9;
  bool nesterov = true;
  double weight_decay = 5e-4;
  double label_smoothing = 0.05;         // the default recipe's (recipes/fashion_mnist.toml)
  bool wd_all = false;                   // weight decay on BatchNorm parameters and biases too (timm: off)
  double bn_bias_lr_scale = 1.0;         // BatchNorm biases learn at this multiple of the schedule's LR (airbench: 64)
  double clip_grad_norm = 0.0;           // clip gradients to this global L2 norm (0: off)
  double ema_decay = 0.0;                // EMA of the weights (timm ModelEmaV2); 0: off
  bool ema_warmup = false;               // EMA decay ramps up as (1 + step) / (10 + step) until it reaches ema_decay
  int64_t lookahead_steps = 0;           // Lookahead's k: every k applied optimizer steps the weights move
                                         // lookahead_alpha of the way from the slow weights to them; 0: off
  double lookahead_alpha = 0.5;          // Lookahead's slow-weight step size, in (0, 1]
};

struct ScheduleConfig {
  std::string name = "onecycle";         // constant | cosine | linear | onecycle | step
  double warmup_epochs = 0.0;            // linear warm-up (cosine, linear, step), in epochs
  double pct_start = 0.25;               // onecycle: fraction of steps spent rising
  std::string anneal_strategy = "linear"; // onecycle: cos | linear, OneCycleLR's anneal_strategy
  int64_t step_epochs = 30;              // step: decay every this many epochs
  double gamma = 0.1;                    // step: decay factor
  bool cycle_momentum = false;           // onecycle: momentum from max to base and back (PyTorch OneCycleLR)
  double base_momentum = 0.85;           // onecycle with cycle_momentum: momentum at the learning-rate peak
  double max_momentum = 0.95;            // onecycle with cycle_momentum: momentum at the start and end
};

struct PerfConfig {
  std::string device = "auto";           // auto (cuda when visible) | cpu | cuda
  std::string amp = "off";               // off | fp16 | bf16: autocast dtype
  bool channels_last = true;             // NHWC parameters and batches (measured: +7% for small_cnn on CPU)
  bool set_to_none = true;               // zero_grad(set_to_none): free gradients instead of zeroing
  int64_t accumulate = 1;                // micro-batches per optimizer step
  bool cudnn_benchmark = false;
  bool tf32 = false;
  bool fused_optim = false;              // fused optimizer update: one ATen kernel (_fused_sgd_/_fused_adamw_)
  bool fold_bn = false;                  // fold BN into the preceding conv for eval/export
  bool cuda_graph = false;               // capture the training step after warm-up (CUDA)
  int64_t interop_threads = 0;           // 0: LibTorch's default
  bool keep_host_memory = true;          // reuse freed host memory instead of page-faulting it in each step
  std::string mode = "auto";             // auto: enable what pays on this hardware (perf_auto.h) unless its flag
                                         // is given | manual: every technique as given
};

struct RunConfig {
  int64_t epochs = 8;                    // the default recipe's: 93.16% on Fashion-MNIST (README)
  int64_t max_steps = 0;                 // 0: no limit; otherwise stop after this many optimizer steps
  std::string time_budget = "300s";      // the whole run's time (300s, 5m, 2h): steps and evaluations planned
                                         // from measured costs (train/budget_calibrate.h); off: --epochs. A
                                         // given --max-steps, or --epochs other than 8, turns it off
  std::string short_run = "auto";        // auto: a --time-budget run of small_cnn where fewer than 5 epochs fit
                                         // cuts each epoch's work as measured on a slow machine (train/short_run.h)
  int64_t eval_every = 0;                // evaluate after every Nth epoch and the last step; 0: every epoch, or
                                         // in a --time-budget run as its plan chooses (budget_plan.h)
  int64_t seed = 0;
  int64_t threads = 0;                   // intra-op threads; 0: the cores this process may run on
  int64_t log_every = 50;                // steps between metric lines
  std::string metrics;                   // JSON-lines file appended to; empty: none
  std::string nan_policy = "stop";       // non-finite loss without AMP: stop | skip (the step)
  int64_t max_skipped_steps = 100;       // consecutive skipped steps that end the run; 0: never
  std::string checkpoint_dir;            // empty: no checkpoints
  int64_t checkpoint_every = 0;          // steps; 0: only at each epoch end
  std::string resume = "off";            // off | on: continue from checkpoint_dir/last.ckpt (it must exist) |
                                         // auto: continue when it exists, else start fresh (restarts)
  std::string init_from;                 // safetensors weights (PyTorch state_dict names) to start from
  bool init_non_strict = false;          // load the names that match, list the rest instead of failing
  std::string init_skip;                 // ECMAScript regex: names it matches keep their initialisation
  int64_t keep_best = 0;                 // keep the K checkpoints with the best test accuracy (0: none)
  double expect_test_acc = 0.0;          // final test accuracy below this (in [0, 1]) ends with exit 3; 0: no check
  std::string tensorboard;               // TensorBoard event files in this directory (rank 0); empty: none
  std::string profile;                   // Chrome/Perfetto trace of --profile-steps written here; empty: none
  std::string profile_steps = "10:12";   // A:B: profile optimizer steps A..B-1
};

struct DistConfig {
  std::string backend = "auto";          // auto (NCCL on CUDA, Gloo on CPU) | gloo | nccl
  double bucket_mb = 25.0;               // MiB of gradients per all-reduce bucket
  double timeout_s = 600.0;              // rendezvous and each collective give up after this (seconds)
  bool broadcast_buffers = true;         // rank 0's BatchNorm statistics to every rank before each forward
  int64_t world_size = 0;                // ranks the run expects; 0: from the environment (WORLD_SIZE, SLURM_NTASKS)
};

struct TrainConfig {
  DataConfig data;
  ModelConfig model;
  OptimConfig optim;
  ScheduleConfig schedule;
  PerfConfig perf;
  RunConfig run;
  DistConfig dist;
};

/// One setting: where it lives in TrainConfig, its flag, TOML key and what it may be.
struct ConfigField {
  using Target = std::variant<int64_t*, double*, bool*, std::string*>;
  ConfigField(std::string key_, std::string flag_, std::string help_, Target target_,
              std::vector<std::string> allowed_ = {}, std::string implicit_ = "")
      : key(std::move(key_)), flag(std::move(flag_)), help(std::move(help_)), target(target_),
        allowed(std::move(allowed_)), implicit(std::move(implicit_)) {}
  std::string key;                       // TOML "section.name"
  std::string flag;                      // "--name"
  std::string help;
  Target target;
  std::vector<std::string> allowed;      // for strings with a closed set of values; empty otherwise
  std::string implicit;                  // the value of the flag given alone (--resume: on); empty: it needs one.
                                         // Such a field takes a TOML or JSON boolean too: true = this, false = allowed[0]
};

/// The fields of `config`, pointing into it.
std::vector<ConfigField> config_fields(TrainConfig& config);

/// Sets fields from a TOML recipe; an unknown key or a wrong type throws InputError naming it.
void config_load_toml(TrainConfig& config, const std::string& path);

/// Checks ranges and allowed values; throws InputError naming the flag and what is allowed.
void config_validate(const TrainConfig& config);

/// The resolved config as a JSON object text, keys as in TOML.
std::string config_to_json(const TrainConfig& config);

/// Sets fields from config_to_json() text (used when resuming and for `eval` from a checkpoint).
void config_from_json(TrainConfig& config, const std::string& json);

} // namespace fastloop
