// The PyTorch peer's results read back into the bench cells (bench/python_peer.h): a stand-in peer run by
// /bin/sh, a peer that cannot start, then tools/bench_peer.py itself on a tiny cell.
#include "fastloop/bench/python_peer.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

using fastloop::BenchCell;
using fastloop::BenchResult;

namespace {

std::filesystem::path temp_dir() {
  const auto dir = std::filesystem::temp_directory_path() / ("fastloop_python_peer_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

BenchResult tiny_peer_request() {
  BenchResult r;
  r.options.models = {"small_cnn"};
  r.options.data = "synthetic:1x28x28:64";
  r.options.batch_size = 16;
  r.options.steps = 1;
  r.options.eval_steps = 1;
  r.options.warmup = 0;
  r.options.repeat = 1;
  r.environment.threads = 1;
  r.environment.device = "cpu";
  for (const char* row : {"baseline", "non-blocking", "cuda-graph"}) {
    BenchCell c;
    c.model = "small_cnn";
    c.row = row;
    c.train_img_per_s = c.eval_img_per_s = 100.0;
    r.cells.push_back(c);
  }
  r.cells[2].status = "n/a: CUDA only (graphs replay CUDA kernels)";
  return r;
}

}  // namespace

TEST(BenchReportPythonPeer, ReadsTheLastJsonLineIntoTheMatchingCells) {
  // A stand-in peer run by /bin/sh: progress first, then the result line, as tools/bench_peer.py prints.
  const auto dir = temp_dir();
  const auto peer = dir / "peer.sh";
  std::ofstream(peer) << "echo 'warming up'\n"
                         "echo '{\"torch\": \"9.9.9\", \"cells\": ["
                         "{\"model\": \"small_cnn\", \"row\": \"baseline\", \"status\": \"ok\", "
                         "\"train_img_per_s\": 50.0, \"eval_img_per_s\": 80.0}, "
                         "{\"model\": \"small_cnn\", \"row\": \"non-blocking\", \"status\": \"n/a: CUDA only\"}]}'\n";
  auto r = tiny_peer_request();
  fastloop::bench_compare_python(r, "/bin/sh", peer.string());
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.environment.pytorch_version, "9.9.9");
  EXPECT_EQ(r.cells[0].python_status, "ok");
  EXPECT_EQ(r.cells[0].python_train_img_per_s, 50.0);
  EXPECT_EQ(r.cells[0].python_eval_img_per_s, 80.0);
  EXPECT_EQ(r.cells[1].python_status, "n/a: CUDA only");
  EXPECT_EQ(r.cells[1].python_train_img_per_s, 0.0);
  EXPECT_EQ(r.cells[2].python_status, "");  // fastloop's own n/a cell is not sent to the peer
}

TEST(BenchReportPythonPeer, AFailingPeerThrowsNamingTheCommand) {
  auto r = tiny_peer_request();
  try {
    fastloop::bench_compare_python(r, "/nonexistent/python3", "tools/bench_peer.py");
    ADD_FAILURE() << "no error for a missing interpreter";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'/nonexistent/python3' 'tools/bench_peer.py' --cells"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("FASTLOOP_PYTHON"), std::string::npos) << e.what();
  }
}

TEST(BenchReportPythonPeer, BenchPeerScriptMeasuresATinyCellInPyTorch) {
  if (!std::filesystem::exists(FASTLOOP_PYTHON)) GTEST_SKIP() << "no project venv at " << FASTLOOP_PYTHON;
  auto r = tiny_peer_request();
  fastloop::bench_compare_python(r, FASTLOOP_PYTHON, FASTLOOP_TEST_DIR "/../tools/bench_peer.py");
  EXPECT_EQ(r.environment.pytorch_version.rfind("2.", 0), 0u) << r.environment.pytorch_version;
  EXPECT_EQ(r.cells[0].python_status, "ok");
  EXPECT_GT(r.cells[0].python_train_img_per_s, 0.0);
  EXPECT_GT(r.cells[0].python_eval_img_per_s, 0.0);
  EXPECT_EQ(r.cells[1].python_status.rfind("n/a: CUDA only", 0), 0u) << r.cells[1].python_status;
  EXPECT_EQ(r.cells[2].python_status, "");
}
