// Runs the PyTorch peer as a child process: the cells go in a temporary JSON file, the peer's progress
// goes to our stderr, and its result is the last JSON line it prints on stdout.
#include "fastloop/bench/python_peer.h"

#include "fastloop/core/shell.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>
#include <vector>

namespace fastloop {

namespace {

nlohmann::json peer_request(const BenchResult& result) {
  const auto& o = result.options;
  nlohmann::json request;
  request["batch_size"] = o.batch_size;
  // The grid's protocol (grid.cpp): --full is 1 warm-up epoch then 4 timed epochs; steps 0 = whole epochs.
  request["steps"] = o.full ? 0 : o.steps;
  request["eval_steps"] = o.full ? 0 : o.eval_steps;
  request["warmup"] = o.full ? 1 : o.warmup;
  request["repeat"] = o.full ? 4 : o.repeat;
  request["threads"] = result.environment.threads;
  request["device"] = result.environment.device.empty() ? "cpu" : result.environment.device;
  request["data"] = o.data;
  request["cells"] = nlohmann::json::array();
  for (const auto& c : result.cells)
    if (c.status == "ok" && c.nproc == 1) request["cells"].push_back({{"model", c.model}, {"row", c.row}});
  return request;
}

// Removes the request file however the run ends.
struct TempFile {
  std::filesystem::path path;
  ~TempFile() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

}  // namespace

void bench_compare_python(BenchResult& result, const std::string& python, const std::string& peer_script) {
  const nlohmann::json request = peer_request(result);
  TempFile cells{std::filesystem::temp_directory_path() /
                 ("fastloop_bench_peer_" + std::to_string(::getpid()) + ".json")};
  {
    std::ofstream out(cells.path);
    out << request.dump();
    if (!out.flush()) throw std::runtime_error("bench: cannot write the peer's cell list " + cells.path.string());
  }
  const std::string command = shell_quote(python) + " " + shell_quote(peer_script) + " --cells " +
                              shell_quote(cells.path.string());
  const CommandOutput peer = command_output(command);
  if (!peer.started) throw std::runtime_error("bench: cannot start the PyTorch peer: " + command);
  const std::string& out = peer.out;
  const int status = peer.status;

  std::string last_json;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] == '{') last_json = line;
  const std::string advice = "; set FASTLOOP_PYTHON (or --python) to a python with torch and torchvision, e.g. .venv/bin/python";
  if (status != 0 || last_json.empty())
    throw std::runtime_error("bench: the PyTorch peer failed (exit status " + std::to_string(status) + "): " + command + advice);
  nlohmann::json reply;
  try {
    reply = nlohmann::json::parse(last_json);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error("bench: the PyTorch peer printed no valid JSON (" + std::string(e.what()) + "): " + command);
  }

  result.environment.pytorch_version = reply.value("torch", "");
  for (auto& c : result.cells) {
    if (c.status != "ok") continue;
    c.python_status = c.nproc == 1 ? "n/a: the peer returned no result for this cell"
                                   : "n/a: distributed cells are not compared";
    for (const auto& peer : reply.at("cells")) {
      if (peer.at("model") != c.model || peer.at("row") != c.row || c.nproc != 1) continue;
      c.python_status = peer.at("status").get<std::string>();
      c.python_train_img_per_s = peer.value("train_img_per_s", 0.0);
      c.python_eval_img_per_s = peer.value("eval_img_per_s", 0.0);
      c.python_train_img_per_s_reps = peer.value("train_img_per_s_all", std::vector<double>{});
      c.python_eval_img_per_s_reps = peer.value("eval_img_per_s_all", std::vector<double>{});
    }
  }
}

} // namespace fastloop
