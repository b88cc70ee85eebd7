// The image operations a pipeline runs after its conversion to float (ToDtype(float), ToTensor, ...), as
// torchvision's v2 kernels run them on float tensors: no rounding to uint8 between operations. They call
// ATen's own ops in the order torchvision's Python code calls them (resize's interpolate, the colour blends,
// conv2d for the blur, ...), so a float pipeline gives torchvision's values on the machine that runs it; those
// kernels (and so the last bits) follow the CPU's ATen capability, unlike fastloop's uint8 kernels, which are
// the same bits everywhere (docs/python.md says which is which; the tests compare float pipelines by tolerance).
#pragma once

#include "fastloop/data/transforms/output_stage.h"
#include "fastloop/data/transforms/transform.h"

#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <vector>

namespace fastloop {

/// One transform on a float image [C, H, W] (contiguous, the pipeline's float dtype) with the sample's draws of
/// that transform; it may replace the tensor (a resize, a crop).
using FloatStep = std::function<void(at::Tensor& image, Draws& draws)>;

/// A transform with a float kernel of its own (GaussianNoise): what its float step runs.
class FloatKernelTransform : public Transform {
 public:
  virtual void apply_float(at::Tensor& image, Draws& draws) const = 0;
};

/// torch's dtype of a stage dtype (float32, float16, bfloat16, float64; uint8).
at::ScalarType stage_scalar_type(StageDtype dtype);

/// The float step of `transform`, its arguments read once; TransformTypeError naming it and listing
/// float_step_names() when fastloop does not run it on float images.
FloatStep float_step_make(const TransformPtr& transform);

/// The torchvision classes float_step_make() runs on float images.
const std::vector<std::string>& float_step_names();

/// The image of a uint8 HWC `image` as a float [C, H, W] tensor of `dtype`, each value through `table`
/// (Pipeline::value_table's c * 256 + v: the conversion and what follows it up to the first float step).
at::Tensor float_image_from_u8(const ImageU8& image, const std::vector<double>& table, at::ScalarType dtype);

/// A float image [C, H, W] into `out`, value (c, y, x) at c * channel_stride + y * row_stride + x * pixel_stride,
/// as float32 cast to T (the value table's path casts so too). Plain loops: no ATen op wakes an OpenMP team
/// from a worker thread.
template <typename T>
void float_image_write(const at::Tensor& image, T* out, int64_t channel_stride, int64_t row_stride,
                       int64_t pixel_stride) {
  const at::Tensor f = image.scalar_type() == at::kFloat ? image.contiguous() : image.to(at::kFloat).contiguous();
  const float* in = f.data_ptr<float>();
  const int64_t C = f.size(0), H = f.size(1), W = f.size(2);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x)
        out[c * channel_stride + y * row_stride + x * pixel_stride] = static_cast<T>(in[(c * H + y) * W + x]);
}

} // namespace fastloop
