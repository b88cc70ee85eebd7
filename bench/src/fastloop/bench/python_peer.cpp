// The PyTorch peer as a child process over two pipes (fork + exec: the grid writes a request, then
// reads one reply line; poll() bounds the wait), and the CellPeer that speaks its protocol.
#include "fastloop/bench/python_peer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>
#include <stdexcept>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fastloop {

namespace {

constexpr int kReplyTimeoutMs = 30 * 60 * 1000;  // a --full repetition of ResNet101 on 2 cores takes minutes

nlohmann::json settings_json(const BenchOptions& o, const std::string& device, int64_t threads) {
  // The grid's protocol (grid.cpp): --full is 1 warm-up epoch then 4 timed epochs; steps 0 = whole epochs.
  return {{"batch_size", o.batch_size}, {"steps", o.full ? 0 : o.steps}, {"eval_steps", o.full ? 0 : o.eval_steps},
          {"warmup", o.full ? 1 : o.warmup}, {"repeat", o.full ? 4 : o.repeat}, {"threads", threads},
          {"device", device}, {"data", o.data}};
}

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(std::string("cannot write to the peer: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

}  // namespace

PythonPeer::PythonPeer(const std::string& python, const std::string& script, const BenchOptions& options,
                       const std::string& device, int64_t threads)
    : command_(python + " " + script + " --serve") {
  int in[2], out[2];
  if (::pipe(in) != 0 || ::pipe(out) != 0) throw std::runtime_error("bench: cannot create pipes for the PyTorch peer");
  std::signal(SIGPIPE, SIG_IGN);  // a peer that ended is reported by write_all, not by a signal
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(in[0], STDIN_FILENO), ::dup2(out[1], STDOUT_FILENO);
    ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
    ::execlp(python.c_str(), python.c_str(), script.c_str(), "--serve", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(in[0]), ::close(out[1]);
  to_peer_ = in[1], from_peer_ = out[0];
  alive_ = pid_ > 0;
  const std::string advice =
      "; set FASTLOOP_PYTHON (or --python) to a python with torch and torchvision, e.g. .venv/bin/python";
  try {
    if (!alive_) throw std::runtime_error("fork failed");
    write_all(to_peer_, settings_json(options, device, threads).dump() + "\n");
    const auto hello = nlohmann::json::parse(read_line());
    torch_version_ = hello.at("torch").get<std::string>();
  } catch (const std::exception& e) {
    throw std::runtime_error("bench: the PyTorch peer did not start (" + std::string(e.what()) + "): " + command_ + advice);
  }
}

PythonPeer::~PythonPeer() {
  if (to_peer_ >= 0) ::close(to_peer_);  // end of input: the peer's loop ends
  if (from_peer_ >= 0) ::close(from_peer_);
  if (pid_ > 0) {
    if (!alive_) ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

std::string PythonPeer::read_line() {
  for (;;) {
    const auto end = buffer_.find('\n');
    if (end != std::string::npos) {
      std::string line = buffer_.substr(0, end);
      buffer_.erase(0, end + 1);
      return line;
    }
    pollfd fd{from_peer_, POLLIN, 0};
    const int ready = ::poll(&fd, 1, kReplyTimeoutMs);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) throw std::runtime_error("no reply within " + std::to_string(kReplyTimeoutMs / 60000) + " minutes");
    char chunk[4096];
    const ssize_t n = ::read(from_peer_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("it ended (see its messages above)");
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

std::string PythonPeer::request(const std::string& line) {
  if (!alive_) throw std::runtime_error("the PyTorch peer ended earlier in this grid");
  try {
    write_all(to_peer_, line + "\n");
    return read_line();
  } catch (const std::exception& e) {
    alive_ = false;
    throw std::runtime_error(std::string("the PyTorch peer stopped answering: ") + e.what());
  }
}

PythonCellPeer::PythonCellPeer(PythonPeer& peer, std::string model, std::string row, int slot)
    : peer_(peer), model_(std::move(model)), row_(std::move(row)), slot_(slot) {}

void PythonCellPeer::begin() {
  begun_ = true;
  try {
    const auto reply = nlohmann::json::parse(peer_.request(nlohmann::json{{"op", "cell"}, {"model", model_}, {"row", row_}, {"slot", slot_}}.dump()));
    if (reply.value("event", "") == "ready") status_ = reply.value("status", "failed: no status in the peer's reply");
    else status_ = "failed: " + reply.value("error", "expected the cell's ready event, got " + reply.dump());
  } catch (const std::exception& e) {
    status_ = std::string("failed: ") + e.what();
  }
}

std::string PythonCellPeer::next(const std::string& expected, std::vector<double>* rates) {
  if (status_ != "ok") return status_;
  try {
    const auto reply = nlohmann::json::parse(peer_.request(nlohmann::json{{"op", "next"}, {"slot", slot_}}.dump()));
    const std::string event = reply.value("event", "");
    if (event == "error") status_ = "failed: " + reply.value("error", "");
    else if (event != expected) status_ = "failed: protocol: expected " + expected + ", the peer sent " + reply.dump();
    else if (rates) rates->push_back(reply.at("img_per_s").get<double>());
  } catch (const std::exception& e) {
    status_ = std::string("failed: ") + e.what();
  }
  return status_;
}

void PythonCellPeer::train_begin() { begin(); }
void PythonCellPeer::train_rep() { next("train_rep", &train_reps_); }
void PythonCellPeer::eval_begin() {
  if (!begun_) begin();  // an eval-only row starts here
  next("eval_ready", nullptr);
}
void PythonCellPeer::eval_rep() { next("eval_rep", &eval_reps_); }

} // namespace fastloop
