// Rendezvous, backend choice and failure reporting of the process group. Gloo's headers come from
// Debian's libgloo-dev (the wheel ships none); only ProcessGroupGloo's constructor, Options and
// device factory are used, so the older gloo's headers match the gloo compiled into libtorch_cpu.
#include "fastloop/dist/process_group.h"

#include "fastloop/core/compat.h"
#include "fastloop/core/errors.h"
#include "fastloop/dist/nccl.h"

#include <ATen/ATen.h>
#include <torch/cuda.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>
#include <c10/util/Logging.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <arpa/inet.h>
#include <netdb.h>
#include <unistd.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>

namespace fastloop {

namespace {
std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0));
}

std::string heartbeat_key(int64_t rank) { return "fastloop/heartbeat/" + std::to_string(rank); }

bool contains(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

std::string rank_list(const std::vector<int64_t>& ranks) {
  std::string out;
  for (auto r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}
/// The local address packets to `host` leave from (a connected UDP socket sends nothing).
std::string route_source_address(const std::string& host, int64_t port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  std::string address = "127.0.0.1";
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return address;
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in local{};
  socklen_t len = sizeof(local);
  char text[INET_ADDRSTRLEN] = {0};
  if (fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
      inet_ntop(AF_INET, &local.sin_addr, text, sizeof(text)))
    address = text;
  if (fd >= 0) close(fd);
  freeaddrinfo(found);
  return address;
}
/// LibTorch's log at errors only while one lives, in any thread: its store client logs a failed read as a
/// warning with a C++ stack trace, and when rank 0 (the store's host) is gone that happens both in the probe
/// of lost_ranks() and in the heartbeat thread, while the caller reports the loss in one message. The level
/// is process-wide, so overlapping scopes count: the first saves it, the last restores it.
class LibTorchErrorsOnly {
 public:
  LibTorchErrorsOnly() {
    std::lock_guard<std::mutex> lock(mutex());
    if (depth()++ == 0) saved() = std::exchange(FLAGS_caffe2_log_level, 2);  // 0 info, 1 warning, 2 error
  }
  ~LibTorchErrorsOnly() {
    std::lock_guard<std::mutex> lock(mutex());
    if (--depth() == 0) FLAGS_caffe2_log_level = saved();
  }
  LibTorchErrorsOnly(const LibTorchErrorsOnly&) = delete;
  LibTorchErrorsOnly& operator=(const LibTorchErrorsOnly&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static int& depth() {
    static int d = 0;
    return d;
  }
  static int& saved() {
    static int s = 0;
    return s;
  }
};

}  // namespace

namespace {

/// --dist-backend resolved for `device`: auto is nccl on CUDA, gloo otherwise.
std::string backend_name_for(const std::string& asked, const c10::Device& device) {
  const std::string name = asked == "auto" ? (device.is_cuda() ? "nccl" : "gloo") : asked;
  if (name != "gloo" && name != "nccl") throw InputError("--dist-backend " + name + ": expected auto, gloo or nccl");
  if (name == "nccl" && !device.is_cuda())
    throw InputError("--dist-backend nccl needs a CUDA device; use gloo (or auto) on CPU");
  return name;
}

/// A name that does not resolve fails at once instead of after the rendezvous timeout.
void master_addr_check(const std::string& master_addr) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(master_addr.c_str(), nullptr, &hints, &found); rc != 0)
    throw InputError("MASTER_ADDR '" + master_addr + "' does not resolve (" + gai_strerror(rc) +
                     "); set it to the host name or address of rank 0");
  freeaddrinfo(found);
}

struct RendezvousStores {
  c10::intrusive_ptr<c10d::Store> store, heartbeat_store;
};

/// The rendezvous store and the heartbeat thread's own client of it; an InputError that says what to check
/// when the rendezvous fails (a port in use on rank 0, or ranks that never came).
RendezvousStores rendezvous_connect(const DistEnv& env, double timeout_s) {
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<uint16_t>(env.master_port);
  // Under torchrun the agent already serves MASTER_PORT: a second server there would fail to bind (c10d
  // logs it as an error line), so every rank is a client of the agent's store, as torch.distributed does.
  store_options.isServer = env.rank == 0 && !env.agent_store;
  store_options.numWorkers = static_cast<size_t>(env.world_size);
  store_options.waitWorkers = true;
  store_options.timeout = millis(timeout_s);
  RendezvousStores stores;
  try {
    stores.store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
    c10d::TCPStoreOptions client = store_options;
    client.isServer = false;
    client.waitWorkers = false;
    client.numWorkers = std::nullopt;
    stores.heartbeat_store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, client);
    if (env.agent_store) {  // the agent's store outlives a restarted group: the dead attempt's keys stay behind
      const std::string attempt = "/worker/attempt_" + std::to_string(env.restart_count);
      stores.store = c10::make_intrusive<c10d::PrefixStore>(attempt, stores.store);
      stores.heartbeat_store = c10::make_intrusive<c10d::PrefixStore>(attempt, stores.heartbeat_store);
    }
  } catch (const c10::Error& e) {
    const std::string message = e.what_without_backtrace();
    if (env.rank == 0 && (contains(message, "EADDRINUSE") || contains(message, "ddress already in use")))
      throw InputError("MASTER_PORT " + std::to_string(env.master_port) +
                       " is in use on this host, so rank 0 cannot host the rendezvous; choose a free port "
                       "(--master-port for fastloop launch, MASTER_PORT otherwise)");
    throw InputError("rendezvous at MASTER_ADDR:MASTER_PORT = " + env.master_addr + ":" +
                     std::to_string(env.master_port) + " failed for rank " + std::to_string(env.rank) + " of " +
                     std::to_string(env.world_size) + " within " + std::to_string(static_cast<int64_t>(timeout_s)) +
                     " s (--dist-timeout-s): check that rank 0 runs on that host and port and all " +
                     std::to_string(env.world_size) + " ranks were started. Cause: " + message);
  }
  return stores;
}

/// The gloo or nccl backend over `store`, all ranks connected.
c10::intrusive_ptr<c10d::Backend> backend_connect(const std::string& backend_name, const DistEnv& env,
                                                   const c10::intrusive_ptr<c10d::Store>& store, double timeout_s) {
  try {
    if (backend_name == "gloo") {
      auto gloo = c10d::ProcessGroupGloo::Options::create(millis(timeout_s));
      // Gloo listens on GLOO_SOCKET_IFNAME's interface when set (as in torch.distributed), else on the
      // address this host reaches MASTER_ADDR from: right on one node (loopback) and across nodes.
      const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
      gloo->devices.push_back(interface && *interface
                                  ? c10d::ProcessGroupGloo::createDeviceForInterface(interface)
                                  : c10d::ProcessGroupGloo::createDeviceForHostname(
                                        route_source_address(env.master_addr, env.master_port)));
      return c10::make_intrusive<c10d::ProcessGroupGloo>(store, static_cast<int>(env.rank),
                                                         static_cast<int>(env.world_size), gloo);
    }
    if constexpr (compat::kBuiltWithCuda)  // nccl_backend_make exists in CUDA builds only
      return nccl_backend_make(store, env.rank, env.world_size, millis(timeout_s));
    else
      throw InputError("--dist-backend nccl: this LibTorch was built without CUDA; use gloo");
  } catch (const c10::Error& e) {
    throw InputError("the " + backend_name + " process group of rank " + std::to_string(env.rank) + " of " +
                     std::to_string(env.world_size) + " (rendezvous " + env.master_addr + ":" +
                     std::to_string(env.master_port) + ") could not connect all ranks: " + e.what_without_backtrace());
  }
}

}  // namespace

ProcessGroup::ProcessGroup(const DistEnv& env, c10::Device device, ProcessGroupOptions options)
    : env_(env), device_(device), options_(std::move(options)) {
  backend_name_ = backend_name_for(options_.backend(), device);
  master_addr_check(env_.master_addr);
  RendezvousStores stores = rendezvous_connect(env_, options_.timeout_s());
  store_ = std::move(stores.store);
  heartbeat_store_ = std::move(stores.heartbeat_store);
  backend_ = backend_connect(backend_name_, env_, store_, options_.timeout_s());

  heartbeat_ = std::thread([this] {
    const auto period = millis(options_.heartbeat_s());
    try {
      while (!stop_) {
        {
          const LibTorchErrorsOnly quiet;  // a lost store host is reported by the next collective
          heartbeat_store_->add(heartbeat_key(env_.rank), 1);
        }
        std::this_thread::sleep_for(period);
      }
    } catch (const std::exception&) {
      // The store went away (rank 0 ended or was lost): the next collective reports it.
    }
  });
}

ProcessGroup::~ProcessGroup() {
  stop_ = true;
  if (heartbeat_.joinable()) heartbeat_.join();
}

std::vector<int64_t> ProcessGroup::lost_ranks() {
  // A rank is lost when its heartbeat counter does not move for 4 heartbeat periods. When rank 0, the
  // store's host, is gone, LibTorch's store client logs the failed read as a warning with a C++ stack
  // trace: errors only while probing, since the caller reports the loss in one message.
  const LibTorchErrorsOnly quiet;
  std::vector<int64_t> before(static_cast<size_t>(env_.world_size)), lost;
  try {
    for (int64_t r = 0; r < env_.world_size; ++r) before[r] = store_->add(heartbeat_key(r), 0);
    std::this_thread::sleep_for(millis(4 * options_.heartbeat_s()));
    for (int64_t r = 0; r < env_.world_size; ++r)
      if (r != env_.rank && store_->add(heartbeat_key(r), 0) == before[r]) lost.push_back(r);
  } catch (const std::exception&) {
    if (env_.rank != 0) lost = {0};  // the store lives in rank 0: unreachable means rank 0 is gone
  }
  return lost;
}

void ProcessGroup::fail(const std::string& what, const std::string& cause) {
  const auto lost = lost_ranks();
  const std::string who = lost.empty() ? "a rank stopped answering (none is known lost; a timeout or network fault?)"
                                       : "lost rank " + rank_list(lost) + " of " + std::to_string(env_.world_size) +
                                             (lost == std::vector<int64_t>{0} ? " (the rendezvous host)" : "") +
                                             ": it ended, crashed or became unreachable";
  throw RankLostError("rank " + std::to_string(env_.rank) + ": " + what + " failed: " + who + ". Cause: " + cause);
}

at::Device ProcessGroup::work_device() const { return backend_name_ == "nccl" ? device_ : at::Device(at::kCPU); }

c10::intrusive_ptr<c10d::Work> ProcessGroup::allreduce_async(at::Tensor& tensor) {
  std::vector<at::Tensor> tensors{tensor};
  try {
    return backend_->allreduce(tensors);
  } catch (const std::exception& e) {
    fail("all-reduce", e.what());
  }
}

void ProcessGroup::wait(const c10::intrusive_ptr<c10d::Work>& work, const std::string& what) {
  try {
    work->wait();
  } catch (const c10::Error& e) {
    fail(what, e.what_without_backtrace());
  } catch (const std::exception& e) {
    fail(what, e.what());
  }
}

void ProcessGroup::wait_host(const c10::intrusive_ptr<c10d::Work>& work, const std::string& what) {
  if (work_device().is_cuda()) {
    const auto deadline = std::chrono::steady_clock::now() + millis(options_.timeout_s());
    try {
      while (!work->isCompleted()) {
        if (std::chrono::steady_clock::now() > deadline) {
          backend_->abort();  // ends the stuck kernels, so this process can exit
          fail(what, "no result after " + std::to_string(static_cast<int64_t>(options_.timeout_s())) +
                         " s (--dist-timeout-s)");
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    } catch (const c10::Error& e) {
      fail(what, e.what_without_backtrace());
    }
  }
  wait(work, what);
}

void ProcessGroup::allreduce(at::Tensor& tensor, const std::string& what, bool max) {
  at::Tensor work = tensor.to(work_device()).contiguous();
  std::vector<at::Tensor> tensors{work};
  c10d::AllreduceOptions opts;
  opts.reduceOp = max ? c10d::ReduceOp::MAX : c10d::ReduceOp::SUM;
  c10::intrusive_ptr<c10d::Work> pending;
  try {
    pending = backend_->allreduce(tensors, opts);
  } catch (const std::exception& e) {
    fail(what, e.what());
  }
  wait_host(pending, what);
  tensor.copy_(work);
}

void ProcessGroup::broadcast(const std::vector<at::Tensor>& tensors, const std::string& what) {
  at::NoGradGuard no_grad;
  std::map<at::ScalarType, std::vector<at::Tensor>> by_dtype;  // one collective per dtype
  for (const auto& t : tensors) by_dtype[t.scalar_type()].push_back(t);
  for (auto& [dtype, group] : by_dtype) {
    std::vector<at::Tensor> flat_parts;
    for (const auto& t : group) flat_parts.push_back(t.detach().reshape(-1).to(work_device()));
    std::vector<at::Tensor> flat{at::cat(flat_parts)};
    c10d::BroadcastOptions opts;
    opts.rootRank = 0;
    c10::intrusive_ptr<c10d::Work> pending;
    try {
      pending = backend_->broadcast(flat, opts);
    } catch (const std::exception& e) {
      fail(what, e.what());
    }
    wait_host(pending, what);
    int64_t offset = 0;
    for (auto& t : group) {  // reshape of the contiguous slice, then a strided copy into t
      t.detach().copy_(flat[0].narrow(0, offset, t.numel()).view(t.sizes()));
      offset += t.numel();
    }
  }
}

bool ProcessGroup::any(bool flag, const std::string& what) {
  at::Tensor value = at::full({1}, flag ? 1 : 0, at::kInt);
  allreduce(value, what, /*max=*/true);
  return value.item<int>() != 0;
}

std::shared_ptr<ProcessGroup> process_group_join(const DistConfig& config, const DistEnv& env, c10::Device device) {
  if (config.world_size > 0 && config.world_size != env.world_size)
    throw InputError("--world-size " + std::to_string(config.world_size) + " but the environment (" + env.source +
                     ") describes " + std::to_string(env.world_size) +
                     " ranks; start the run with that many ranks (fastloop launch --nproc-per-node N, torchrun, srun)");
  if (!env.distributed()) return nullptr;
  return std::make_shared<ProcessGroup>(
      env, device, ProcessGroupOptions().backend(config.backend).timeout_s(config.timeout_s));
}

c10::Device dist_device(c10::Device device, const DistEnv& env) {
  if (!device.is_cuda() || !env.distributed()) return device;
  const int64_t visible = std::max<int64_t>(1, static_cast<int64_t>(torch::cuda::device_count()));  // ranks may share a GPU in tests
  const c10::Device mine(c10::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank % visible));
  c10::impl::getDeviceGuardImpl(c10::kCUDA)->setDevice(mine);  // before any CUDA work of this rank
  return mine;
}

} // namespace fastloop
