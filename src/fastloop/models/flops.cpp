// Counts multiply-adds by observing the ATen ops of a forward pass: a thread-local RecordFunction
// callback sees each convolution or matrix product with its input shapes (start) and output (end).
// Counting the ops that really run, rather than walking modules, covers any model and any input size.
#include "fastloop/models/flops.h"

#include "fastloop/core/errors.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <cstring>
#include <memory>
#include <string>

namespace fastloop {

namespace {

// The count in progress on this thread. RecordFunction callbacks are plain function pointers, so the
// running count is reached through this pointer, set only inside count_multiply_adds().
struct MacCount {
  double macs = 0.0;
  int64_t depth = 0;  // counted ops open on the stack; > 0: we are inside a counted layer
};
thread_local MacCount* active_count = nullptr;

struct LayerContext : at::ObserverContext {
  bool outer = false;            // not nested in another counted op: this one counts
  double macs = 0.0;             // known at start (products, transposed convolutions)
  double macs_per_output = 0.0;  // ordinary convolutions: × output elements, known at the end
};

enum class Layer { kNone, kConvolution, kLinear, kMatmul, kBatchMatmul };

Layer layer_of(const char* name) {
  if (std::strcmp(name, "aten::convolution") == 0 || std::strcmp(name, "aten::_convolution") == 0)
    return Layer::kConvolution;
  if (std::strcmp(name, "aten::linear") == 0) return Layer::kLinear;
  if (std::strcmp(name, "aten::addmm") == 0 || std::strcmp(name, "aten::mm") == 0) return Layer::kMatmul;
  if (std::strcmp(name, "aten::bmm") == 0 || std::strcmp(name, "aten::baddbmm") == 0) return Layer::kBatchMatmul;
  return Layer::kNone;
}

double numel(const c10::IValue& v) { return static_cast<double>(v.toTensor().numel()); }

// Fills `context` from the op's inputs (only readable in the start callback).
void layer_start(Layer layer, const at::RecordFunction& fn, LayerContext& context) {
  const auto inputs = fn.inputs();
  switch (layer) {
    case Layer::kConvolution: {
      // (input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
      const at::Tensor weight = inputs[1].toTensor();
      const double per_element = static_cast<double>(weight.numel() / weight.size(0));
      if (inputs[6].toBool())  // weight [C_in, C_out/groups, k...]: each input element feeds C_out/g × k
        context.macs = numel(inputs[0]) * per_element;
      else                     // weight [C_out, C_in/groups, k...]: each output element sums C_in/g × k
        context.macs_per_output = per_element;
      break;
    }
    case Layer::kLinear: {  // (input [..., K], weight [N, K], bias): M × K × N
      const at::Tensor weight = inputs[1].toTensor();
      context.macs = numel(inputs[0]) * static_cast<double>(weight.size(0));
      break;
    }
    case Layer::kMatmul: {  // mm(a [M, K], b [K, N]) or addmm(c, a, b): M × K × N
      const size_t first = std::strcmp(fn.name(), "aten::addmm") == 0 ? 1 : 0;
      context.macs = numel(inputs[first]) * static_cast<double>(inputs[first + 1].toTensor().size(1));
      break;
    }
    case Layer::kBatchMatmul: {  // bmm(a [B, M, K], b [B, K, N]) or baddbmm(c, a, b)
      const size_t first = std::strcmp(fn.name(), "aten::baddbmm") == 0 ? 1 : 0;
      context.macs = numel(inputs[first]) * static_cast<double>(inputs[first + 1].toTensor().size(2));
      break;
    }
    case Layer::kNone:
      break;
  }
}

std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction& fn) {
  const Layer layer = layer_of(fn.name());
  if (active_count == nullptr || layer == Layer::kNone) return nullptr;
  auto context = std::make_unique<LayerContext>();
  context->outer = active_count->depth++ == 0;
  if (context->outer) layer_start(layer, fn, *context);
  return context;
}

void on_op_end(const at::RecordFunction& fn, at::ObserverContext* base) {
  if (active_count == nullptr || base == nullptr) return;
  auto* context = static_cast<LayerContext*>(base);
  --active_count->depth;
  if (!context->outer) return;
  double macs = context->macs;
  if (context->macs_per_output > 0.0 && !fn.outputs().empty() && fn.outputs()[0].isTensor())
    macs += context->macs_per_output * numel(fn.outputs()[0]);
  active_count->macs += macs;
}

// Removes the callback and clears the thread's count however `run` leaves.
class CountScope {
 public:
  explicit CountScope(MacCount& count) {
    TORCH_CHECK(active_count == nullptr, "count_multiply_adds: already counting on this thread");
    active_count = &count;
    handle_ = at::addThreadLocalCallback(
        at::RecordFunctionCallback(on_op_start, on_op_end).needsInputs(true).needsOutputs(true).scopes(
            {at::RecordScope::FUNCTION}));
  }
  ~CountScope() {
    at::removeCallback(handle_);
    active_count = nullptr;
  }
  CountScope(const CountScope&) = delete;
  CountScope& operator=(const CountScope&) = delete;

 private:
  at::CallbackHandle handle_;
  at::RecordFunctionGuard enabled_{true};
};

}  // namespace

double count_multiply_adds(const std::function<void()>& run) {
  MacCount count;
  {
    CountScope scope(count);
    run();
  }
  return count.macs;
}

double model_forward_macs(ClassifierImpl& model, at::IntArrayRef image_shape) {
  if (image_shape.size() != 3 || image_shape[0] < 1 || image_shape[1] < 1 || image_shape[2] < 1)
    throw InputError("model FLOPs: image shape " + c10::str(image_shape) +
                     " is not {channels, height, width} with positive sizes, e.g. {3, 32, 32}");
  const auto parameters = model.parameters();
  const auto options = parameters.empty() ? at::TensorOptions(at::kFloat)
                                          : at::TensorOptions(parameters.front().device()).dtype(parameters.front().dtype());
  std::vector<int64_t> shape{1};
  shape.insert(shape.end(), image_shape.begin(), image_shape.end());
  const at::Tensor image = at::zeros(shape, options);
  const bool was_training = model.is_training();
  model.eval();  // BatchNorm must not update running statistics from this dummy image
  double macs = 0.0;
  try {
    torch::NoGradGuard no_grad;
    macs = count_multiply_adds([&] { model.forward(image); });
  } catch (...) {
    model.train(was_training);
    throw;
  }
  model.train(was_training);
  return macs;
}

double model_forward_flops(ClassifierImpl& model, at::IntArrayRef image_shape) {
  return 2.0 * model_forward_macs(model, image_shape);
}

} // namespace fastloop
