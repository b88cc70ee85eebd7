// `fastloop bench --compare-python`: bench/peers/bench_peer.py runs the same cells in PyTorch Python (same
// LibTorch kernels, models, batch, threads and data) as one long-lived process. Its repetitions alternate
// with fastloop's inside each cell (CellPeer), so both sides of every pair see the machine at the same
// speed, and each cell gets a "fastloop ÷ PyTorch" ratio per pair of repetitions.
#pragma once

#include "fastloop/bench/cell_timer.h"
#include "fastloop/bench/result.h"

#include <memory>
#include <string>
#include <vector>

namespace fastloop {

/// The peer process: `python script --serve`, the grid's settings on its first input line, then one
/// JSON request per line and one JSON reply per line; its progress goes to our stderr.
class PythonPeer {
 public:
  /// Starts the peer and waits for its greeting; throws std::runtime_error naming the command and what
  /// to do when it cannot start or does not greet (no torch, a wrong --python).
  PythonPeer(const std::string& python, const std::string& script, const BenchOptions& options,
             const std::string& device, int64_t threads);
  ~PythonPeer();  // closes its input and reaps it
  PythonPeer(const PythonPeer&) = delete;
  PythonPeer& operator=(const PythonPeer&) = delete;

  const std::string& torch_version() const { return torch_version_; }
  /// One request line → the reply line. Throws std::runtime_error when the peer has ended or does not
  /// answer within the timeout; the peer is unusable afterwards (alive() false).
  std::string request(const std::string& line);
  bool alive() const { return alive_; }

 private:
  std::string read_line();
  int pid_ = -1, to_peer_ = -1, from_peer_ = -1;
  std::string buffer_, command_, torch_version_;
  bool alive_ = false;
};

/// One cell of the peer, driven by cell_run() through CellPeer. A peer that cannot run the row, fails
/// in it or breaks the protocol leaves the cell's status saying so; fastloop's side goes on.
class PythonCellPeer : public CellPeer {
 public:
  /// slot: the peer's cell slot; cells in different slots can be open at once (the --twin's eager cell).
  PythonCellPeer(PythonPeer& peer, std::string model, std::string row, int slot = 0);
  void train_begin() override;
  void train_rep() override;
  void eval_begin() override;
  void eval_rep() override;

 private:
  void begin();                                             // the "cell" request, once
  std::string next(const std::string& expected, std::vector<double>* rates);  // one "next" request

  PythonPeer& peer_;
  std::string model_, row_;
  int slot_ = 0;
  bool begun_ = false;
};

} // namespace fastloop
