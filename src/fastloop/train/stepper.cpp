// Stepper: the trainer's micro-step and optimizer step, with the CUDA-graph capture and DDP hooks.
#include "fastloop/train/stepper.h"

#include "fastloop/dist/process_group.h"
#include "fastloop/train/optim.h"

#include <cstdio>

namespace fastloop {

namespace {
// Eager steps in this process before --cuda-graph captures: lazily made state (optimizer buffers, the
// scaler's device tensors, cuBLAS/cuDNN handles and algorithm choice) must exist first, since nothing may
// allocate from the host inside a capture. Counted per process, so a resumed run warms up too.
constexpr int64_t kGraphWarmupSteps = 3;
}  // namespace

Stepper::Stepper(TrainSetup& setup, LrSchedule schedule, bool announce)
    : setup_(setup), schedule_(std::move(schedule)), announce_(announce) {}

void Stepper::graph_try_capture(const at::Tensor& images, const at::Tensor& labels, int64_t cycle_length) {
  std::string why = "the gradient all-reduce of distributed training is not captured; training without capture";
  if (!setup_.ddp)
    graph_ = graphed_step_make(*setup_.model, setup_.step, setup_.scaler, images, labels, cycle_length, &why);
  if (!graph_) graph_refusal_ = why;
  setup_.step.keep_gradients = graph_ != nullptr;  // the graph owns the gradient tensors
  if (announce_) std::printf("cuda-graph: %s\n", graph_ ? "training step captured" : why.c_str());
}

at::Tensor Stepper::micro_step(const at::Tensor& images, const at::Tensor& labels, int64_t micro,
                               int64_t cycle_length, PhaseRecorder* recorder) {
  if (setup_.config.perf.cuda_graph && !graph_ && graph_refusal_.empty() && eager_steps_ >= kGraphWarmupSteps)
    graph_try_capture(images, labels, cycle_length);
  if (setup_.ddp) setup_.ddp->prepare_micro_step(/*sync=*/micro + 1 == cycle_length);  // no_sync before
  at::Tensor loss;
  if (graph_) {  // forward and backward are one replay: their time shows under forward
    loss = graph_->run(images, labels);
    phase_mark(recorder, &TimeSplit::forward);
  } else {
    loss = train_micro_step(*setup_.model, images, labels, setup_.step, cycle_length, setup_.scaler, recorder);
  }
  if (!setup_.scaler.enabled())
    cycle_finite_ = micro == 0 ? loss.isfinite() : cycle_finite_.logical_and(loss.isfinite());
  return loss;
}

CycleResult Stepper::optimizer_step(int64_t step, PhaseRecorder* recorder) {
  CycleResult result;
  // Without a scaler (fp32, bf16) a non-finite loss is caught here: one host sync per step. It is read
  // before the gradient sync, so the host never blocks behind a collective it does not poll: with NCCL the
  // compute stream waits on the all-reduces after finish_gradient_sync(), and a dead peer would then hang
  // the read until NCCL's watchdog aborts; any() polls and ends with fastloop's message instead.
  if (!setup_.scaler.enabled()) {
    result.finite = cycle_finite_.item<bool>();
    if (setup_.group) result.finite = !setup_.group->any(!result.finite, "non-finite loss check");  // all agree
  }
  if (setup_.ddp) {  // gradients averaged over ranks before the update; the wait is what backward did not hide
    setup_.ddp->finish_gradient_sync();
    phase_mark(recorder, &TimeSplit::communication);
  }
  result.lr = schedule_.lr_at(step);
  optimizer_set_lr(*setup_.optimizer, result.lr, setup_.lr_scales);
  if (schedule_.cycles_momentum()) optimizer_set_momentum(*setup_.optimizer, schedule_.momentum_at(step));
  if (result.finite) {
    result.stepped = train_optimizer_step(*setup_.optimizer, setup_.scaler, setup_.step, recorder);
  } else {
    setup_.optimizer->zero_grad(/*set_to_none=*/!setup_.step.keep_gradients);  // the cycle's gradients dropped
    phase_mark(recorder, &TimeSplit::optimizer);
  }
  if (result.stepped && setup_.lookahead) setup_.lookahead->step(*setup_.model);  // counts applied steps only
  if (setup_.ema) setup_.ema->update(*setup_.model, step);  // after every optimizer step, as timm's train loop
  if (!graph_) ++eager_steps_;
  return result;
}

} // namespace fastloop
