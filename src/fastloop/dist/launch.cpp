// The local ranks of a distributed run: spawned with torchrun's environment, their output relayed line
// by line with a rank prefix, signals forwarded, the rest stopped when one fails.
#include "fastloop/dist/launch.h"

#include "fastloop/core/errors.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace fastloop {

namespace {

std::atomic<int> g_forward_signal{0};  // set from a signal handler, so it cannot live in a struct
extern "C" void forward_signal(int sig) { g_forward_signal = sig; }

/// One rank's output stream: bytes in, whole lines out with the rank prefix.
struct Relay {
  int fd = -1;
  FILE* to = stdout;
  std::string pending;
  std::string prefix;

  void emit(const std::string& line) {
    std::fputs((prefix + line).c_str(), to);
    std::fflush(to);
  }
  bool pump() {  // false at end of stream
    char buffer[4096];
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) return true;
    if (n <= 0) {
      if (!pending.empty()) emit(pending + "\n");
      pending.clear();
      close(fd);
      fd = -1;
      return false;
    }
    pending.append(buffer, static_cast<size_t>(n));
    for (size_t end; (end = pending.find('\n')) != std::string::npos;) {
      emit(pending.substr(0, end) + "\n");
      pending.erase(0, end + 1);
    }
    return true;
  }
};

struct Rank {
  int64_t rank = 0;
  pid_t pid = -1;
  bool running = true;
  int code = 0;
};

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

pid_t spawn_rank(const std::vector<std::string>& command, const std::vector<std::pair<std::string, std::string>>& env,
                 int out_fd, int err_fd) {
  const pid_t launcher = getpid();
  const pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // a launcher killed outright takes its ranks with it
  if (getppid() != launcher) _exit(1);
  setpgid(0, 0);  // Ctrl-C reaches the ranks once, forwarded by the launcher, not also from the terminal
  for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
  dup2(out_fd, STDOUT_FILENO);
  dup2(err_fd, STDERR_FILENO);
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "launch: cannot run %s: %s\n", argv[0], std::strerror(errno));
  _exit(127);
}

}  // namespace

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  const bool found = fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                     getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  const int error = errno;
  if (fd >= 0) close(fd);
  if (!found) throw InputError(std::string("--master-port 0: could not find a free port on this host: ") + std::strerror(error));
  return ntohs(addr.sin_port);
}

namespace {

/// Signals go to the ranks while they run; the caller's handlers come back afterwards.
struct SignalsForwarded {
  void (*interrupt)(int) = std::signal(SIGINT, forward_signal);
  void (*terminate)(int) = std::signal(SIGTERM, forward_signal);
  void (*pipe)(int) = std::signal(SIGPIPE, SIG_IGN);
  ~SignalsForwarded() {
    std::signal(SIGINT, interrupt);
    std::signal(SIGTERM, terminate);
    std::signal(SIGPIPE, pipe);
  }
};

/// This node's ranks, running, and the relays of their stdout and stderr.
struct LocalRanks {
  std::vector<Rank> ranks;
  std::vector<Relay> relays;
};

/// Forks this node's ranks with torchrun's environment, each one's output into a relay with its prefix.
LocalRanks spawn_local_ranks(const LaunchOptions& options, const std::vector<std::string>& command, int port) {
  const int64_t world = options.nnodes() * options.nproc_per_node();
  LocalRanks local_ranks;
  for (int64_t local = 0; local < options.nproc_per_node(); ++local) {
    const int64_t rank = options.node_rank() * options.nproc_per_node() + local;
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("launch: pipe failed");
    const std::vector<std::pair<std::string, std::string>> env = {
        {"MASTER_ADDR", options.master_addr()}, {"MASTER_PORT", std::to_string(port)},
        {"RANK", std::to_string(rank)},         {"WORLD_SIZE", std::to_string(world)},
        {"LOCAL_RANK", std::to_string(local)},  {"LOCAL_WORLD_SIZE", std::to_string(options.nproc_per_node())},
        {"GROUP_RANK", std::to_string(options.node_rank())}};
    const pid_t pid = spawn_rank(command, env, out[1], err[1]);
    close(out[1]);
    close(err[1]);
    local_ranks.ranks.push_back({rank, pid});
    std::string prefix = "[";  // appended: GCC 12 warns (-Wstringop-overflow) on "[" + std::string&& here
    prefix += std::to_string(rank);
    prefix += "] ";
    local_ranks.relays.push_back({out[0], stdout, "", prefix});
    local_ranks.relays.push_back({err[0], stderr, "", prefix});
    if (options.announce())
      std::fprintf(stderr, "launch: rank %lld is pid %d\n", static_cast<long long>(rank), static_cast<int>(pid));
  }
  return local_ranks;
}

/// Relays output and reaps the ranks until all have ended and their streams closed. The first rank to
/// fail stops the others (SIGTERM, SIGKILL after --grace-s); its exit code is returned (0: all succeeded).
class Supervisor {
 public:
  Supervisor(LocalRanks& local, double grace_s) : local_(local), grace_(static_cast<int64_t>(grace_s * 1000)) {}

  int run() {
    size_t running = local_.ranks.size(), open_streams = local_.relays.size();
    while (running > 0 || open_streams > 0) {
      if (const int sig = g_forward_signal.exchange(0)) signal_all(sig);
      open_streams -= relay_output();
      running -= reap();
      if (stopping_ && Clock::now() >= kill_at_) signal_all(SIGKILL), stopping_ = false;
    }
    if (failed_rank_ >= 0)
      std::fprintf(stderr, "launch: failed: rank %lld exited with code %d\n", static_cast<long long>(failed_rank_),
                   failed_code_);
    return failed_code_;
  }

 private:
  using Clock = std::chrono::steady_clock;

  void signal_all(int sig) {
    for (const auto& r : local_.ranks)
      if (r.running) kill(r.pid, sig);
  }

  /// Waits up to 100 ms for output and relays it; returns the number of streams that ended.
  size_t relay_output() {
    std::vector<pollfd> fds;
    std::vector<size_t> which;
    for (size_t i = 0; i < local_.relays.size(); ++i)
      if (local_.relays[i].fd >= 0) fds.push_back({local_.relays[i].fd, POLLIN, 0}), which.push_back(i);
    if (fds.empty()) {
      usleep(100 * 1000);
      return 0;
    }
    size_t ended = 0;
    if (poll(fds.data(), fds.size(), 100) > 0)
      for (size_t k = 0; k < fds.size(); ++k)
        if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) ended += !local_.relays[which[k]].pump();
    return ended;
  }

  /// Reaps the ranks that ended (each by its pid: the caller's other children are not ours); returns how many.
  size_t reap() {
    size_t ended = 0;
    for (auto& r : local_.ranks) {
      int status = 0;
      if (!r.running || waitpid(r.pid, &status, WNOHANG) != r.pid) continue;
      r.running = false;
      r.code = exit_code(status);
      ++ended;
      if (r.code == 0 || failed_rank_ >= 0) continue;
      failed_rank_ = r.rank, failed_code_ = r.code;
      std::fprintf(stderr, "launch: rank %lld exited with code %d%s; stopping the other ranks\n",
                   static_cast<long long>(r.rank), r.code,
                   WIFSIGNALED(status) ? (std::string(" (") + strsignal(WTERMSIG(status)) + ")").c_str() : "");
      stopping_ = true;
      kill_at_ = Clock::now() + std::chrono::milliseconds(grace_);
      signal_all(SIGTERM);
    }
    return ended;
  }

  LocalRanks& local_;
  const int64_t grace_;  // milliseconds from SIGTERM to SIGKILL
  int failed_code_ = 0;
  int64_t failed_rank_ = -1;
  bool stopping_ = false;
  Clock::time_point kill_at_{};
};

}  // namespace

int launch_ranks(const LaunchOptions& options, std::vector<std::string> command) {
  if (command.empty())
    throw InputError("launch needs a command after --, e.g. fastloop launch --nproc-per-node 2 -- train --epochs 1");
  if (options.node_rank() >= options.nnodes())
    throw InputError("--node-rank " + std::to_string(options.node_rank()) + " must be below --nnodes " +
                     std::to_string(options.nnodes()));
  if (options.master_port() == 0 && options.nnodes() > 1)
    throw InputError("--master-port 0 (a free port) works on one node only; give every node the same port");
  const int port = options.master_port() == 0 ? free_port() : static_cast<int>(options.master_port());
  // A fastloop subcommand runs this same executable; a path runs that program (torchrun --no-python).
  if (command[0].find('/') == std::string::npos) command.insert(command.begin(), self_executable());

  if (options.announce())
    std::fprintf(stderr, "launch: ranks %lld-%lld of %lld on this node, rendezvous %s:%d\n",
                 static_cast<long long>(options.node_rank() * options.nproc_per_node()),
                 static_cast<long long>((options.node_rank() + 1) * options.nproc_per_node() - 1),
                 static_cast<long long>(options.nnodes() * options.nproc_per_node()), options.master_addr().c_str(),
                 port);
  SignalsForwarded forwarded;
  LocalRanks local = spawn_local_ranks(options, command, port);
  return Supervisor(local, options.grace_s()).run();
}

std::string self_executable() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) throw std::runtime_error("launch: cannot find this executable (/proc/self/exe)");
  return std::string(path, static_cast<size_t>(n));
}

} // namespace fastloop
