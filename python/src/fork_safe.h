// Running LibTorch work from Python in a process that may be a fork()ed child. After fork() only the forking
// thread exists in the child; GNU OpenMP's pool of that thread still lists the parent's workers, and its
// next parallel region waits for them forever (plain PyTorch hangs the same way; DataLoader's workers call
// torch.set_num_threads(1) to avoid it). A new thread gets a pool of its own, so in a forked child fastloop
// runs its work on one. A run that was going on in another thread at the fork cannot be worked around: its
// thread's LibTorch locks (autocast's cast cache, the allocator's) stay locked in the child, so a run there
// raises RuntimeError instead of hanging.
#pragma once

#include <unistd.h>

#include <atomic>
#include <exception>
#include <stdexcept>
#include <functional>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

namespace fastloop::python {

/// The process that imported fastloop._C; any other pid is a fork()ed child of it (or of a child).
inline pid_t& import_pid() {
  static pid_t pid = getpid();
  return pid;
}

/// Whether this process is a fork()ed child of the one that imported fastloop.
inline bool in_forked_child() { return getpid() != import_pid(); }

/// `work()` on a new thread, joined; an exception it throws is rethrown here.
inline void on_new_thread(const std::function<void()>& work) {
  std::exception_ptr error;
  std::thread([&] {
    try {
      work();
    } catch (...) {
      error = std::current_exception();
    }
  }).join();
  if (error) std::rethrow_exception(error);
}

/// The train() / evaluate() calls in flight and the process they run in (lock-free: fork copies them as
/// they are, so a child sees the parent's runs that its fork cut off).
struct RunsInFlight {
  std::atomic<int> count{0};
  std::atomic<pid_t> pid{0};
};
inline RunsInFlight& runs_in_flight() {
  static RunsInFlight runs;
  return runs;
}

/// Counts one run for its lifetime; refuses one in a forked child whose parent had a run going at the fork.
class RunInFlight {
 public:
  RunInFlight() {
    RunsInFlight& runs = runs_in_flight();
    if (runs.pid.load() != getpid()) {
      if (runs.count.load() > 0)
        throw std::runtime_error(
            "fastloop: this process was fork()ed while fastloop.train() or evaluate() ran in another thread of its "
            "parent; that thread's LibTorch locks stay locked here, so a run would hang. Start the run in a "
            "process made with the spawn start method (torch.multiprocessing.spawn, "
            "multiprocessing.get_context('spawn')), or fork before or after the parent's run");
      runs.pid.store(getpid());
    }
    runs.count.fetch_add(1);
  }
  ~RunInFlight() { runs_in_flight().count.fetch_sub(1); }
  RunInFlight(const RunInFlight&) = delete;
  RunInFlight& operator=(const RunInFlight&) = delete;
};

/// `work()` on the calling thread, or in a forked child on a new thread; RuntimeError (above) in a child
/// forked while a run was in flight.
template <typename Work>
auto fork_safe_run(Work&& work) -> decltype(work()) {
  using Result = decltype(work());
  const RunInFlight counted;
  if (!in_forked_child()) return work();
  if constexpr (std::is_void_v<Result>) {
    on_new_thread([&] { work(); });
  } else {
    std::optional<Result> result;
    on_new_thread([&] { result.emplace(work()); });
    return std::move(*result);
  }
}

} // namespace fastloop::python
