// A c10d process group for data-parallel training: TCPStore rendezvous at MASTER_ADDR:MASTER_PORT,
// then ProcessGroupGloo (CPU) or ProcessGroupNCCL (CUDA). Collective failures are turned into errors
// that name the rank that was lost, found from heartbeats every rank writes into the store.
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/dist/dist_env.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <torch/arg.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace fastloop {

struct ProcessGroupOptions {
  /// auto (NCCL for CUDA devices, Gloo otherwise) | gloo | nccl
  TORCH_ARG(std::string, backend) = "auto";
  /// Rendezvous and every collective give up after this long (seconds).
  TORCH_ARG(double, timeout_s) = 600.0;
  /// Seconds between heartbeats; a rank silent for 4 of them is reported lost when a collective fails.
  TORCH_ARG(double, heartbeat_s) = 0.5;
};

class ProcessGroup {
 public:
  /// Joins the group `env` describes; blocks until all ranks arrived (or the timeout passed).
  /// Throws InputError for a bad MASTER_ADDR, a port in use or an unreachable rendezvous.
  ProcessGroup(const DistEnv& env, c10::Device device, ProcessGroupOptions options = {});
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int64_t rank() const { return env_.rank; }
  int64_t size() const { return env_.world_size; }
  const std::string& backend_name() const { return backend_name_; }

  /// Starts an in-place sum over ranks of `tensor` (dense, contiguous, on the group's device kind).
  c10::intrusive_ptr<c10d::Work> allreduce_async(at::Tensor& tensor);
  /// Waits for `work`; a failure throws RankLostError naming lost ranks, `what` says which collective.
  void wait(const c10::intrusive_ptr<c10d::Work>& work, const std::string& what);

  /// In-place sum (or max) over ranks, blocking. Any device: copied to where the backend works if needed.
  void allreduce(at::Tensor& tensor, const std::string& what, bool max = false);
  /// Copies rank 0's values into `tensors` on every rank, coalesced per dtype (any strides).
  void broadcast(const std::vector<at::Tensor>& tensors, const std::string& what);
  /// True on every rank when `flag` is true on any rank.
  bool any(bool flag, const std::string& what);

  /// Ranks whose heartbeat stopped (for messages); empty when all are alive.
  std::vector<int64_t> lost_ranks();
  /// Where collectives run: the group's CUDA device for NCCL (which refuses CPU tensors), the CPU for Gloo.
  at::Device work_device() const;

 private:
  /// wait() for a collective whose result the host reads next: on NCCL the host first polls the work
  /// until it finished or the timeout passed (then the communicators are aborted and the loss reported),
  /// since reading a result that a lost peer never lets finish would block inside CUDA.
  void wait_host(const c10::intrusive_ptr<c10d::Work>& work, const std::string& what);
  [[noreturn]] void fail(const std::string& what, const std::string& cause);

  DistEnv env_;
  c10::Device device_;  // this rank's device
  ProcessGroupOptions options_;
  std::string backend_name_;
  c10::intrusive_ptr<c10d::Store> store_;            // rank 0 hosts it
  c10::intrusive_ptr<c10d::Store> heartbeat_store_;  // own connection: the heartbeat thread never waits on others
  c10::intrusive_ptr<c10d::Backend> backend_;
  std::thread heartbeat_;
  std::atomic<bool> stop_{false};
};

/// A collective failed because a rank went away (killed, crashed, network gone).
class RankLostError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The group of a distributed run as `config` and `env` describe it, or null for a single process.
/// Checks --world-size against the environment.
std::shared_ptr<ProcessGroup> process_group_join(const DistConfig& config, const DistEnv& env, c10::Device device);

/// The device of this rank: cuda:LOCAL_RANK (modulo the visible GPUs) for CUDA, `device` otherwise. On CUDA
/// it also becomes the current device (c10::cuda::set_device), so no rank creates a context on GPU 0.
c10::Device dist_device(c10::Device device, const DistEnv& env);

} // namespace fastloop
