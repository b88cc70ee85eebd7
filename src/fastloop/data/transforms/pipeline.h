// A Loader's compiled transform pipeline: the specs (spec.h) made into transforms once, then run by every
// worker on its own uint8 image with the draws of (seed, epoch, index), so a sample's result never depends
// on which thread ran it. The transforms up to the conversion to float run on uint8 images; the conversion,
// Normalize and a RandomErasing after them form the output stage, which the loader writes straight into the
// batch through a per-channel value table (output_stage.h).
#pragma once

#include "fastloop/data/transforms/draws.h"
#include "fastloop/data/transforms/erasing_transforms.h"
#include "fastloop/data/transforms/output_stage.h"
#include "fastloop/data/transforms/resize_crop_fusion.h"
#include "fastloop/data/transforms/resize_transforms.h"
#include "fastloop/data/transforms/spec.h"
#include "fastloop/data/transforms/transform.h"

#include <ATen/ATen.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fastloop {

/// The draws of top-level transform `position` for sample `index` in `epoch` of a run with `seed`. Each
/// top-level transform has its own stream, so adding a transform leaves the draws of the others as they
/// were; positions 0 and 1 are the streams of the built-in crop and flip (image_augment.h), so the default
/// pipeline RandomResizedCrop + RandomHorizontalFlip makes the same batches as they did.
Draws pipeline_draws(uint64_t seed, int64_t epoch, int64_t index, int64_t position);

/// The transforms of `specs` made through transform_registry(), in order.
std::vector<TransformPtr> pipeline_make(const std::vector<TransformSpec>& specs);

/// The canonical spelling of a made pipeline: each transform's repr() joined by ", " (parses back).
std::string pipeline_repr(const std::vector<TransformPtr>& transforms);

class Pipeline {
 public:
  /// Compiles `spec`. The conversions and Normalize must stand at the top level (not in a container), after
  /// every operation on uint8 images, and Normalize after a conversion to float (torchvision's TypeError
  /// otherwise); a RandomErasing after the conversion erases the float output. TransformTypeError otherwise.
  explicit Pipeline(const std::string& spec);

  /// The canonical spelling (parses back to the same pipeline).
  const std::string& repr() const { return repr_; }

  /// A top-level UniformTemporalSubsample(n)'s n (0: none). It is not one of the pipeline's transforms: a video
  /// loader picks each clip's frames with it before decoding them (video_batch.h checks that the clips do), and the
  /// transforms after it keep the draw streams they would have without it, as in fastloop.Loader's Python side.
  int64_t temporal_subsample() const { return temporal_subsample_; }

  /// Runs the uint8 transforms at positions [first, uint8_end()) on `image`, each with its stream; a random
  /// resize, flip and crop in a row run fused (resize_crop_fusion.h), with the same draws and bytes.
  void run_u8(ImageU8& image, uint64_t seed, int64_t epoch, int64_t index, TransformScratch& scratch,
              size_t first = 0) const;
  size_t uint8_end() const { return uint8_end_; }

  /// run_u8 on a sample with boxes and masks (targets.h): each transform's apply_targets(), with the same
  /// draws, so the image comes out as run_u8 makes it. Call check_targets() once first.
  void run_targets(ImageU8& image, SampleTargets& targets, uint64_t seed, int64_t epoch, int64_t index,
                   TransformScratch& scratch) const;
  /// A TransformTypeError naming the first transform that cannot move boxes and masks (AutoAugment's family,
  /// as in torchvision), if any.
  void check_targets() const;

  /// The first transform when it only crops or resizes (RandomResizedCrop, Resize, CenterCrop), so a loader
  /// can decode just the region it reads; nullptr otherwise.
  const ResizePlanTransform* head() const { return head_; }
  /// A CenterCrop right after a Resize head (eval's Resize + CenterCrop): the loader resizes just its window.
  const ResizePlanTransform* head_crop() const { return head_crop_; }

  /// The size of every image the pipeline makes from images of size `in` (default: images of any size), when
  /// it ends in a fixed size (a crop or a resize to a size); {0, 0} when the size follows the image or the draws.
  ImageSize output_size(ImageSize in = {}) const;

  /// Whether operations run on the float image after the conversion (a Resize or ColorJitter after ToDtype):
  /// then the loader writes run_float()'s tensor instead of the value table's values.
  bool float_steps() const { return !float_steps_.empty(); }
  /// The part after the uint8 transforms on a float image (float_ops.h: torchvision's float kernels through
  /// ATen), starting from `image` (what run_u8 or run_targets made) through the value table's first steps; the
  /// targets (if any) move with it. Returns [C, H, W] in the pipeline's dtype.
  at::Tensor run_float(const ImageU8& image, SampleTargets* targets, uint64_t seed, int64_t epoch, int64_t index,
                       TransformScratch& scratch) const;

  /// What torchvision's pipeline makes of a sample's targets, which the loader's target dicts follow: plain
  /// tensors after a ToPureTensor (else tv_tensors), and the dtype a ToDtype dict gives masks and boxes
  /// ("torch.int64", ...; empty: unchanged).
  bool pure_tensors() const { return pure_tensors_; }
  const std::string& mask_dtype() const { return mask_dtype_; }
  const std::string& boxes_dtype() const { return boxes_dtype_; }

  /// Whether the output stage converts to float (ToTensor, ToDtype(float, ...), ConvertImageDtype).
  bool float_output() const { return dtype_ != StageDtype::kUInt8; }
  StageDtype dtype() const { return dtype_; }

  /// The output value of uint8 value v of channel c: table[c * 256 + v], computed as torchvision does on each
  /// value (to_dtype, then each Normalize, rounded to the pipeline's dtype after every operation). A
  /// uint8 output stage gives v itself.
  std::vector<float> value_table(int64_t channels) const;

  /// RandomErasing after the conversion to float: erases, in `out` (a channels x height x width image of
  /// the output stage, `channel_stride` / `row_stride` / `pixel_stride` values apart), with sample
  /// (seed, epoch, index)'s draws; values rounded to the pipeline's dtype, then stored by `store(ptr, v)`.
  template <typename T, typename Store>
  void erase_output(T* out, int64_t channels, int64_t height, int64_t width, int64_t channel_stride,
                    int64_t row_stride, int64_t pixel_stride, uint64_t seed, int64_t epoch, int64_t index,
                    Store store) const {
    for (const auto& [op, position, steps_before] : output_erasing_) {
      Draws draws = pipeline_draws(seed, epoch, index, position);
      const ErasingBox box = op->box_draw(channels, height, width, draws);
      if (!box.erase) continue;
      for (int64_t c = 0; c < channels; ++c) {
        // A fixed value is one output value per channel; 'random' draws (and converts) each pixel's.
        const auto fixed = static_cast<float>(op->random() ? 0.0 : output_value(op->value_draw(c, draws), c, steps_before));
        for (int64_t y = box.top; y < box.top + box.height; ++y)
          for (int64_t x = box.left; x < box.left + box.width; ++x)
            store(out + c * channel_stride + y * row_stride + x * pixel_stride,
                  op->random() ? static_cast<float>(output_value(op->value_draw(c, draws), c, steps_before)) : fixed);
      }
    }
  }

  /// A float value `v` of channel c (an erased pixel's) through the output steps [first_step, end): rounded to
  /// the dtype at that point, then each later Normalize as torch computes it.
  double output_value(double v, int64_t channel, size_t first_step) const;

 private:
  // The output stage of the transforms [conversion, end) that touch pixels: a value table and erasing, or float steps.
  void stage_split(const std::vector<size_t>& after_conversion);
  // The uint8 transforms from `first` on, with targets or (nullptr) without.
  void run_from(ImageU8& image, SampleTargets* targets, uint64_t seed, int64_t epoch, int64_t index,
                TransformScratch& scratch, size_t first) const;

  std::string repr_;
  int64_t temporal_subsample_ = 0;
  std::vector<TransformPtr> transforms_;
  size_t uint8_end_ = 0;  // transforms_[0, uint8_end_) run on uint8 images
  std::vector<size_t> after_uint8_;  // later transforms that touch no pixel (targets alone): run after them
  struct FloatStepAt {
    size_t position;
    std::function<void(at::Tensor&, Draws&)> step;  // empty: a transform of targets alone
  };
  std::vector<FloatStepAt> float_steps_;  // from the first transform the value table cannot hold, to the end
  StageDtype table_dtype_ = StageDtype::kFloat32;  // the float image's dtype where float_steps_ begin
  std::array<std::vector<double>, 5> float_tables_;  // [channels]: the value table before float_steps_
  bool pure_tensors_ = false;
  std::string mask_dtype_, boxes_dtype_;
  const ResizePlanTransform* head_ = nullptr;
  const ResizePlanTransform* head_crop_ = nullptr;
  std::vector<ResizeCropGroup> fused_;  // groups of the uint8 transforms that run as one step
  StageDtype dtype_ = StageDtype::kUInt8;
  std::vector<const Transform*> output_steps_;  // ConvertTransform / NormalizeTransform, in order
  struct OutputErasing {
    const RandomErasingTransform* op;
    int64_t position;     // its draw stream
    size_t steps_before;  // output_steps_ before it: the later ones apply to its values
  };
  std::vector<OutputErasing> output_erasing_;
};

} // namespace fastloop
