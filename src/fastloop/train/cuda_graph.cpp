// The device-independent half of cuda_graph.h: whether a graph can be captured here.
#include "fastloop/train/cuda_graph.h"

#include "fastloop/core/compat.h"

#include <c10/util/Exception.h>

namespace fastloop {

std::unique_ptr<GraphedStep> graphed_step_make(ClassifierImpl& model, const StepOptions& options, GradScaler& scaler,
                                               const at::Tensor& images, const at::Tensor& labels,
                                               int64_t accumulate, std::string* why) {
  auto refuse = [&](const std::string& reason) {
    if (why) *why = reason;
    return std::unique_ptr<GraphedStep>();
  };
  if (!images.is_cuda()) return refuse("CUDA graphs need a CUDA device; training on the CPU without capture");
  if (accumulate > 1)
    return refuse("--accumulate " + std::to_string(accumulate) +
                  ": each replay would overwrite the gradients of the micro-step before; training without capture");
  if constexpr (compat::kBuiltWithCuda) {
    try {  // a capture that fails leaves nothing capturing (its guard ended it): the run goes on eagerly
      return detail::graphed_step_make_cuda(model, options, scaler, images, labels);
    } catch (const std::exception& e) {
      const c10::Error* error = dynamic_cast<const c10::Error*>(&e);
      model.zero_grad(/*set_to_none=*/true);  // whatever the failed capture left in .grad
      return refuse(std::string("capture failed (") + (error ? error->what_without_backtrace() : e.what()) +
                    "); training without capture");
    }
  } else {
    return refuse("this LibTorch was built without CUDA; training without graph capture");
  }
}

} // namespace fastloop
