// Running LibTorch work from Python in a process that may be a fork()ed child. After fork() only the forking
// thread exists in the child; GNU OpenMP's pool of that thread still lists the parent's workers, and its
// next parallel region waits for them forever (plain PyTorch hangs the same way; DataLoader's workers call
// torch.set_num_threads(1) to avoid it). A new thread gets a pool of its own, so in a forked child fastloop
// runs its work on one.
#pragma once

#include <unistd.h>

#include <exception>
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

/// `work()` on the calling thread, or in a forked child on a new thread.
template <typename Work>
auto fork_safe_run(Work&& work) -> decltype(work()) {
  using Result = decltype(work());
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
