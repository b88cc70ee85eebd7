// The PyTorch peer (bench/python_peer.h): its repetitions interleave with fastloop's inside each cell
// (cell_run calls the CellPeer in order), a stand-in peer run by /bin/sh speaks the protocol, its replies
// become the cell's figures and pair ratios, failures stay in their cell, and bench/peers/bench_peer.py itself
// runs a tiny grid interleaved with fastloop.
#include "fastloop/bench/python_peer.h"

#include "fastloop/bench/cell_timer.h"
#include "fastloop/bench/grid.h"
#include "fastloop/data/sources/source.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

using namespace fastloop;

namespace {

BenchOptions tiny_options() {
  BenchOptions o;
  o.models = {"small_cnn"};
  o.data = "synthetic:1x28x28:64";
  o.batch_size = 16;
  o.steps = 1;
  o.eval_steps = 1;
  o.warmup = 0;
  o.repeat = 2;
  o.device = "cpu";
  o.threads = 1;
  o.progress = false;
  return o;
}

// A stand-in peer: greets, answers "cell" with ready (or an error for row "broken"), then each "next"
// with the events of a 2-repetition cell: train 50 img/s, eval 80 img/s.
std::string stand_in_peer(const std::filesystem::path& dir) {
  const auto path = dir / "peer.sh";
  std::ofstream(path) << R"(read settings
echo '{"event": "hello", "torch": "9.9.9", "threads": 1}'
echo 'stand-in peer: progress goes to stderr' >&2
while read line; do
  case "$line" in
    *broken*) echo '{"event": "error", "error": "RuntimeError: no such model"}' ;;
    *'"cell"'*) echo '{"event": "ready", "status": "ok"}'; n=0 ;;
    *) n=$((n + 1))
       case $n in
         1|2) echo '{"event": "train_rep", "img_per_s": 50.0}' ;;
         3) echo '{"event": "eval_ready"}' ;;
         *) echo '{"event": "eval_rep", "img_per_s": 80.0}' ;;
       esac ;;
  esac
done
)";
  return path.string();
}

struct RecordingPeer : CellPeer {
  std::vector<std::string> calls;
  void train_begin() override { calls.push_back("train_begin"); }
  void train_rep() override { calls.push_back("train_rep"); }
  void eval_begin() override { calls.push_back("eval_begin"); }
  void eval_rep() override { calls.push_back("eval_rep"); }
};

}  // namespace

TEST(BenchPythonPeer, CellRunAlternatesItsRepetitionsWithThePeers) {
  const DatasetSplits data = data_load("synthetic:1x28x28:64");
  CellPlan plan;
  plan.config = test::tiny_config(64, 16);
  plan.steps = plan.eval_steps = 1;
  plan.warmup = 1;
  plan.repeat = 3;
  std::vector<std::string> order;
  struct OrderPeer : RecordingPeer {  // e.g. the PyTorch peer, a --twin and the twin's eager PyTorch cell
    std::vector<std::string>* order = nullptr;
    std::string name;
    void train_rep() override { RecordingPeer::train_rep(), order->push_back(name); }
    void eval_rep() override { RecordingPeer::eval_rep(), order->push_back(name); }
  } p, a, b;
  p.order = a.order = b.order = &order, p.name = "p", a.name = "a", b.name = "b";
  plan.peers = {&p, &a, &b};
  const CellTimes times = cell_run(plan, data);
  EXPECT_EQ(times.repetitions.size(), 3u);
  const std::vector<std::string> expected = {"train_begin", "train_rep", "train_rep", "train_rep",
                                             "eval_begin",  "eval_rep",  "eval_rep",  "eval_rep"};
  EXPECT_EQ(p.calls, expected);
  EXPECT_EQ(b.calls, expected);
  const std::vector<std::string> three = {"p", "a", "b", "b", "a", "p", "p", "a", "b"};
  std::vector<std::string> both = three;
  both.insert(both.end(), three.begin(), three.end());
  EXPECT_EQ(order, both) << "the peers in the given order after the cell's even repetitions, reversed before its odd ones";
}

TEST(BenchPythonPeer, StandInPeerFillsTheCellAndItsPairRatios) {
  const fastloop::test::TempDir tmp;
  const std::filesystem::path dir = tmp.path();
  PythonPeer peer("/bin/sh", stand_in_peer(dir), tiny_options(), "cpu", 1);
  EXPECT_EQ(peer.torch_version(), "9.9.9");
  PythonCellPeer cell(peer, "small_cnn", "baseline");
  cell.train_begin(), cell.train_rep(), cell.train_rep(), cell.eval_begin(), cell.eval_rep(), cell.eval_rep();
  ASSERT_EQ(cell.status(), "ok");
  EXPECT_EQ(cell.train_reps(), (std::vector<double>{50.0, 50.0}));
  EXPECT_EQ(cell.eval_reps(), (std::vector<double>{80.0, 80.0}));

  BenchCell bench;
  bench.train_img_per_s_reps = {100.0, 40.0};  // pairs 2.0 and 0.8: they disagree more than 0.8 differs from 1
  bench.eval_img_per_s_reps = {168.0, 176.0};  // pairs 2.1 and 2.2: a clear effect
  bench.python = comparison_of(bench, "PyTorch", cell);
  EXPECT_EQ(bench.python.status, "ok");
  EXPECT_DOUBLE_EQ(bench.python.train_img_per_s, 50.0);
  EXPECT_DOUBLE_EQ(bench.python.train.median, 0.8);
  EXPECT_DOUBLE_EQ(bench.python.train.max, 2.0);
  EXPECT_TRUE(bench.python.train.noisy);
  EXPECT_DOUBLE_EQ(bench.python.eval.median, 2.1);
  EXPECT_DOUBLE_EQ(bench.python.eval.min, 2.1);
  EXPECT_DOUBLE_EQ(bench.python.eval.max, 2.2);
  EXPECT_FALSE(bench.python.eval.noisy);

  PythonCellPeer broken(peer, "small_cnn", "broken");  // a failing cell stays in its cell; the peer goes on
  broken.train_begin(), broken.train_rep();
  EXPECT_EQ(broken.status(), "failed: RuntimeError: no such model");
  EXPECT_TRUE(broken.train_reps().empty());
  PythonCellPeer after(peer, "small_cnn", "baseline");
  after.train_begin(), after.train_rep();
  EXPECT_EQ(after.status(), "ok");
  EXPECT_EQ(after.train_reps().size(), 1u);
}

TEST(BenchPythonPeer, APeerThatCannotStartNamesTheCommand) {
  try {
    PythonPeer peer("/nonexistent/python3", "bench/peers/bench_peer.py", tiny_options(), "cpu", 1);
    ADD_FAILURE() << "no error for a missing interpreter";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/python3 bench/peers/bench_peer.py --serve"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("FASTLOOP_PYTHON"), std::string::npos) << e.what();
  }
}

TEST(BenchPythonPeer, BenchPeerScriptRunsATinyGridInterleavedWithFastloop) {
  FASTLOOP_SKIP_WITHOUT_VENV();
  BenchOptions o = tiny_options();
  o.rows = {"baseline", "no-grad", "cuda-graph"};
  o.compare_python = true;
  o.python = FASTLOOP_PYTHON;
  o.peer = FASTLOOP_TEST_DIR "/../bench/peers/bench_peer.py";
  const BenchResult r = bench_run(o);
  ASSERT_EQ(r.cells.size(), 3u);
  EXPECT_EQ(r.environment.pytorch_version.rfind("2.", 0), 0u) << r.environment.pytorch_version;
  const BenchCell& baseline = r.cells[0];
  ASSERT_EQ(baseline.python.status, "ok");
  EXPECT_EQ(baseline.python.train_img_per_s_reps.size(), 2u);
  EXPECT_EQ(baseline.python.eval_img_per_s_reps.size(), 2u);
  EXPECT_GT(baseline.python.train.median, 0.0);
  EXPECT_LE(baseline.python.train.min, baseline.python.train.max);
  const BenchCell& no_grad = r.cells[1];  // an evaluation-only row: the peer starts at evaluation
  ASSERT_EQ(no_grad.python.status, "ok");
  EXPECT_TRUE(no_grad.python.train_img_per_s_reps.empty());
  EXPECT_EQ(no_grad.python.eval_img_per_s_reps.size(), 2u);
  EXPECT_EQ(r.cells[2].status.rfind("n/a", 0), 0u) << r.cells[2].status;  // CUDA only: not sent to the peer
  EXPECT_EQ(r.cells[2].python.status, "");
}
