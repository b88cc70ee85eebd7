// Distributed data parallel with real processes on 127.0.0.1 (Gloo): 2 ranks x batch B equal 1 process
// x batch 2B; one all-reduce per bucket per optimizer step with --accumulate; a killed rank ends the
// others with a message naming it; rendezvous mistakes are input errors; two network namespaces; a group
// stopped mid-epoch resumes on another number of ranks.
#include "fastloop/core/errors.h"
#include "fastloop/dist/dist_env.h"
#include "fastloop/dist/launch.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/loader_state.h"

#include "test_support.h"

#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <nlohmann/json.hpp>
#include <torch/serialize.h>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;

namespace {
using fastloop::free_port;
using fastloop::test::spawn;
using fastloop::test::wait_exit;

struct Result {
  int code = -1;        // exit code, 128 + signal when killed
  std::string output;   // stdout and stderr
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Result run(const std::vector<std::string>& args, const std::vector<std::pair<std::string, std::string>>& env = {}) {
  const fastloop::test::TempDir tmp;  // the log, read back below
  const std::string log = tmp / "log";
  Result r;
  r.code = wait_exit(spawn(args, env, log));
  r.output = read_file(log);
  return r;
}

std::vector<std::string> helper(const std::string& out, int batch, int accumulate, int steps, int bucket_bytes,
                                bool channels_last) {
  return {FASTLOOP_DIST_HELPER, out, std::to_string(batch), std::to_string(accumulate), std::to_string(steps),
          std::to_string(bucket_bytes), channels_last ? "1" : "0"};
}

std::vector<std::string> launch(int nproc, std::vector<std::string> command) {
  std::vector<std::string> args = {FASTLOOP_CLI, "launch", "--nproc-per-node", std::to_string(nproc),
                                   "--master-port", std::to_string(free_port()), "--"};
  args.insert(args.end(), command.begin(), command.end());
  return args;
}

/// Largest |a - b| over the saved tensors of two helper runs (gradients of step 1, then parameters).
double max_difference(const std::string& a, const std::string& b) {
  std::vector<at::Tensor> ta, tb;
  torch::load(ta, a);
  torch::load(tb, b);
  EXPECT_EQ(ta.size(), tb.size());
  double worst = 0;
  for (size_t i = 0; i < ta.size() && i < tb.size(); ++i)
    worst = std::max(worst, (ta[i] - tb[i]).abs().max().item<double>());
  return worst;
}

int64_t count_after(const std::string& text, const std::string& word) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(word + " (\\d+)"))) return -1;
  return std::stoll(m[1]);
}
}  // namespace

TEST(DistEnv, ReadsTorchrunVariablesThenSlurmsAndRejectsMalformedOnes) {
  auto from = [](std::map<std::string, std::string> vars) {
    return fastloop::dist_env_from([vars](const std::string& k) { return vars.count(k) ? vars.at(k) : ""; });
  };
  auto none = from({});
  EXPECT_FALSE(none.distributed());
  auto torchrun = from({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "node7"},
                        {"MASTER_PORT", "1234"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "9"}});
  EXPECT_EQ(torchrun.source, "torchrun");
  EXPECT_EQ(torchrun.rank, 3);
  EXPECT_EQ(torchrun.world_size, 4);
  EXPECT_EQ(torchrun.local_rank, 1);
  EXPECT_EQ(torchrun.master_addr, "node7");
  EXPECT_EQ(torchrun.master_port, 1234);
  EXPECT_FALSE(torchrun.agent_store);
  auto elastic = from({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"}});
  EXPECT_TRUE(elastic.agent_store) << "torchrun's agent hosts the store";
  EXPECT_EQ(elastic.restart_count, 0);
  EXPECT_EQ(from({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"TORCHELASTIC_RESTART_COUNT", "1"}}).restart_count, 1);
  auto slurm = from({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"},
                     {"SLURM_JOB_NODELIST", "gpu[03-04]"}});
  EXPECT_EQ(slurm.source, "slurm");
  EXPECT_EQ(slurm.rank, 5);
  EXPECT_EQ(slurm.world_size, 8);
  EXPECT_EQ(slurm.local_rank, 1);
  EXPECT_EQ(slurm.master_addr, "gpu03");
  EXPECT_EQ(fastloop::slurm_first_host("a1,b[1-2]"), "a1");
  EXPECT_EQ(fastloop::slurm_first_host("n[7,9]"), "n7");
  EXPECT_THROW(from({{"WORLD_SIZE", "two"}}), fastloop::InputError);
  EXPECT_THROW(from({{"WORLD_SIZE", "2"}, {"RANK", "2"}}), fastloop::InputError);
}

TEST(Dist, TwoRanksOfBatchBGiveTheGradientsAndParametersOfOneProcessOfBatch2B) {
  const fastloop::test::TempDir tmp;
  const auto one = tmp / "one.pt", two = tmp / "two.pt";
  // channels_last parameters and gradients; 512-byte buckets: several buckets, reduced while backward runs.
  auto single = run(helper(one, 16, 1, 1, 512, true));
  ASSERT_EQ(single.code, 0) << single.output;
  auto ranks = run(launch(2, helper(two, 8, 1, 1, 512, true)));
  ASSERT_EQ(ranks.code, 0) << ranks.output;
  EXPECT_GT(count_after(ranks.output, "\\[0\\] buckets"), 1) << ranks.output;
  EXPECT_LE(max_difference(one, two), 1e-5);
}

TEST(Dist, AccumulateFourReducesOncePerBucketPerOptimizerStep) {
  const fastloop::test::TempDir tmp;
  const auto one = tmp / "acc_one.pt", two = tmp / "acc_two.pt";
  auto single = run(helper(one, 8, 4, 3, 1024, false));
  ASSERT_EQ(single.code, 0) << single.output;
  auto ranks = run(launch(2, helper(two, 4, 4, 3, 1024, false)));
  ASSERT_EQ(ranks.code, 0) << ranks.output;
  for (const std::string rank : {"0", "1"}) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(ranks.output, m, std::regex("\\[" + rank + "\\] buckets (\\d+) allreduces (\\d+) syncs (\\d+)")))
        << ranks.output;
    const int64_t buckets = std::stoll(m[1]), allreduces = std::stoll(m[2]), syncs = std::stoll(m[3]);
    EXPECT_GT(buckets, 1);
    EXPECT_EQ(syncs, 3);
    EXPECT_EQ(allreduces, buckets * 3) << "3 optimizer steps of 4 micro-batches: no_sync on the first 3";
  }
  EXPECT_LE(max_difference(one, two), 1e-5);
}

TEST(Dist, LaunchedTrainingWritesFilesOnRankZeroOnlyAndResumesWithTheSameWorldSize) {
  const fastloop::test::TempDir tmp;
  const auto dir = tmp.sub("ckpt"), metrics = tmp / "metrics.jsonl";
  std::vector<std::string> train = {"train", "--data", "synthetic:1x12x12:256", "--batch-size", "16", "--epochs", "2",
                                    "--max-steps", "6", "--accumulate", "2", "--threads", "1", "--workers", "0",
                                    "--checkpoint-dir", dir, "--metrics", metrics, "--log-every", "1",
                                    "--bucket-mb", "0.05", "--dist-timeout-s", "60", "--device", "cpu"};
  auto first = run(launch(2, train));
  ASSERT_EQ(first.code, 0) << first.output;
  EXPECT_NE(first.output.find("[0] test accuracy"), std::string::npos) << first.output;
  EXPECT_EQ(first.output.find("[1] test accuracy"), std::string::npos) << "only rank 0 reports";
  EXPECT_EQ(first.output.find("[1] config"), std::string::npos);
  for (const std::string rank : {"0", "1"}) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(first.output, m, std::regex("\\[" + rank + "\\] ddp: rank \\d of 2, (\\d+) buckets, (\\d+) all-reduces")))
        << first.output;
    EXPECT_EQ(std::stoll(m[2]), std::stoll(m[1]) * 6) << "6 optimizer steps";
  }
  const std::string lines = read_file(metrics);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 6 + 2) << "6 step lines and 2 epoch lines, once\n" << lines;
  EXPECT_TRUE(fs::exists(dir + "/last.ckpt"));

  train[6] = "4", train[8] = "12";  // --epochs, --max-steps: continue to step 12
  train.push_back("--resume");
  auto resumed = run(launch(2, train));
  ASSERT_EQ(resumed.code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("after 12 steps"), std::string::npos) << resumed.output;
}

// 2 ranks stopped mid-epoch (SIGTERM to the launcher, which forwards it) resume on 3 ranks and on 1: the epoch
// goes on from the samples the 2 took together, its rest shared by the new ranks (each sample once, as
// test_loader_state.cpp's EpochPosition tests show for the loader that position starts).
TEST(Dist, AGroupStoppedMidEpochResumesOnAnotherNumberOfRanksWhereItStopped) {
  const fastloop::test::TempDir tmp;
  const auto dir = tmp.sub("ckpt"), alone_dir = tmp.sub("alone");
  std::vector<std::string> train = {"train", "--data", "synthetic:1x12x12:2048", "--batch-size", "8", "--epochs", "1",
                                    "--threads", "1", "--workers", "0", "--log-every", "1000", "--dist-timeout-s", "60",
                                    "--device", "cpu", "--checkpoint-dir"};
  auto first = train;
  first.insert(first.end(), {dir, "--checkpoint-every", "1"});
  const std::string log = tmp / "first.log";
  const pid_t launcher = spawn(launch(2, first), {}, log);
  for (int i = 0; i < 12000 && !fs::exists(dir + "/last.ckpt"); ++i)  // 2 minutes at most
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  kill(launcher, SIGTERM);
  EXPECT_NE(wait_exit(launcher), 0) << read_file(log);
  ASSERT_NE(read_file(log).find("stopped at step"), std::string::npos) << read_file(log);

  const auto saved = fastloop::Checkpoint::read(dir + "/last.ckpt");
  const int64_t step = saved.position().step;
  ASSERT_TRUE(step > 0 && step < 2048 / 16) << "stopped mid-epoch: " << step;
  const auto state = fastloop::loader_state_from_json(saved.loader_state_json(), dir);
  EXPECT_EQ(state.epoch, 0);
  EXPECT_EQ(state.position.taken, step * 8 * 2) << "samples both ranks took";
  EXPECT_EQ(state.position.order_world_size, 2);
  EXPECT_EQ(state.world_size, 2);
  fs::copy_file(dir + "/last.ckpt", alone_dir + "/last.ckpt");

  const int64_t rest = 2048 - state.position.taken;
  auto on = [&](int ranks, const std::string& at) {
    auto resume = train;
    resume.insert(resume.end(), {at, "--resume"});
    if (ranks > 1) return run(launch(ranks, resume));
    resume.insert(resume.begin(), FASTLOOP_CLI);
    return run(resume);
  };
  for (const auto& [ranks, at] : std::vector<std::pair<int, std::string>>{{3, dir}, {1, alone_dir}}) {
    const Result resumed = on(ranks, at);
    ASSERT_EQ(resumed.code, 0) << resumed.output;
    EXPECT_NE(resumed.output.find("(written by 2 ranks, " + std::to_string(state.position.taken) +
                                  " samples of the epoch taken: these " + std::to_string(ranks) + " share the rest)"),
              std::string::npos) << resumed.output;
    const int64_t per_rank = (rest + ranks - 1) / ranks;  // DistributedSampler's share; whole batches only
    EXPECT_NE(resumed.output.find("after " + std::to_string(step + per_rank / 8) + " steps"), std::string::npos)
        << ranks << " ranks take the " << rest << " samples left\n" << resumed.output;
  }
}

/// Launches 2 ranks of a long training run, SIGKILLs `victim` once rank 0 has stepped, waits for the launcher.
Result kill_rank_while_training(int victim, const std::string& device = "cpu", const std::string& timeout_s = "60") {
  const fastloop::test::TempDir tmp;
  const std::string log = tmp / "kill.log";
  const pid_t launcher = spawn(launch(2, {"train", "--data", "synthetic:1x12x12:4096", "--batch-size", "8",
                                          "--epochs", "50", "--threads", "1", "--workers", "0", "--log-every", "1",
                                          "--dist-timeout-s", timeout_s, "--device", device}),
                               {}, log);
  pid_t pid = -1;
  for (int i = 0; i < 6000 && pid < 0; ++i) {  // until the victim's pid is known and rank 0 has stepped
    std::smatch m;
    const std::string text = read_file(log);
    if (std::regex_search(text, m, std::regex("rank " + std::to_string(victim) + " is pid (\\d+)")) &&
        text.find("[0] epoch") != std::string::npos)
      pid = std::stoi(m[1]);
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GT(pid, 0) << read_file(log);
  if (pid > 0) kill(pid, SIGKILL);
  Result r;
  r.code = wait_exit(launcher);
  r.output = read_file(log);
  return r;
}

TEST(Dist, SigkilledRankMakesTheOthersFailNamingItAndTheLauncherFails) {
  const Result one = kill_rank_while_training(1);
  EXPECT_EQ(one.code, 128 + SIGKILL) << "the launcher exits with the failed rank's code\n" << one.output;
  EXPECT_NE(one.output.find("launch: rank 1 exited with code 137"), std::string::npos) << one.output;
  EXPECT_TRUE(std::regex_search(one.output, std::regex("\\[0\\] .*lost rank 1 of 2"))) << one.output;
  // Rank 0 hosts the rendezvous store: the survivor names it in one message, without LibTorch's stack trace.
  const Result zero = kill_rank_while_training(0);
  EXPECT_EQ(zero.code, 128 + SIGKILL) << zero.output;
  EXPECT_TRUE(std::regex_search(zero.output, std::regex("\\[1\\] .*lost rank 0 of 2 \\(the rendezvous host\\)")))
      << zero.output;
  EXPECT_EQ(zero.output.find("frame #"), std::string::npos) << zero.output;
}

// On NCCL a lost peer never fails a collective by itself (ProcessGroupNCCL's wait() only orders streams):
// the survivor's host-side wait gives up after --dist-timeout-s, aborts the communicators and names the rank.
TEST(Dist, SigkilledRankEndsTheNcclSurvivorWithinTheTimeout_MultiCUDA) {
  if (torch::cuda::device_count() < 2) GTEST_SKIP() << "needs 2 CUDA devices (NCCL refuses two ranks on one)";
  const Result one = kill_rank_while_training(1, "cuda", "20");
  EXPECT_NE(one.code, 0) << one.output;
  EXPECT_TRUE(std::regex_search(one.output, std::regex("\\[0\\] .*lost rank 1 of 2"))) << one.output;
}

// torchrun's agent already serves the TCPStore at MASTER_ADDR:MASTER_PORT and says so with
// TORCHELASTIC_USE_AGENT_STORE=True: every rank joins it as a client. Hosting a second server there printed
// c10d's "failed to bind" error line at the start of every run (the run itself went on).
TEST(Dist, UnderTorchrunRanksJoinTheAgentsStoreWithoutAServerOfTheirOwn) {
  const std::string torchrun = fs::path(FASTLOOP_PYTHON).parent_path() / "torchrun";
  if (!fs::exists(torchrun)) GTEST_SKIP() << "no torchrun next to " << FASTLOOP_PYTHON;
  auto trained = run({torchrun, "--nproc-per-node", "2", "--master-port", std::to_string(free_port()), "--no-python",
                      FASTLOOP_CLI, "train", "--data", "synthetic:1x12x12:128", "--batch-size", "16", "--max-steps", "2",
                      "--threads", "1", "--workers", "0", "--device", "cpu", "--dist-timeout-s", "60"});
  ASSERT_EQ(trained.code, 0) << trained.output;
  EXPECT_NE(trained.output.find("test accuracy"), std::string::npos) << trained.output;
  EXPECT_EQ(trained.output.find("failed to bind"), std::string::npos) << trained.output;
  EXPECT_EQ(trained.output.find("EADDRINUSE"), std::string::npos) << trained.output;
}

TEST(Dist, BadMasterAddrPortInUseAndMissingRendezvousAreInputErrors) {
  const std::vector<std::string> train = {FASTLOOP_CLI, "train", "--data", "synthetic:1x12x12:64", "--max-steps", "1",
                                          "--threads", "1", "--dist-timeout-s", "3", "--device", "cpu"};
  auto bad_addr = run(train, {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "no-such-host.invalid"},
                              {"MASTER_PORT", std::to_string(free_port())}});
  EXPECT_EQ(bad_addr.code, 2) << bad_addr.output;
  EXPECT_NE(bad_addr.output.find("MASTER_ADDR 'no-such-host.invalid' does not resolve"), std::string::npos) << bad_addr.output;

  const int busy = socket(AF_INET, SOCK_STREAM, 0);  // a port someone else listens on
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(busy, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(busy, 1), 0);
  getsockname(busy, reinterpret_cast<sockaddr*>(&addr), &len);
  auto in_use = run(train, {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"},
                            {"MASTER_PORT", std::to_string(ntohs(addr.sin_port))}});
  close(busy);
  EXPECT_EQ(in_use.code, 2) << in_use.output;
  EXPECT_NE(in_use.output.find("is in use on this host"), std::string::npos) << in_use.output;

  auto nobody = run(train, {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"},
                            {"MASTER_PORT", std::to_string(free_port())}});
  EXPECT_EQ(nobody.code, 2) << nobody.output;
  EXPECT_NE(nobody.output.find("rendezvous at MASTER_ADDR:MASTER_PORT"), std::string::npos) << nobody.output;
}

TEST(Dist, BenchNprocReportsScalingAndTheShareOfCommunicationHiddenBehindBackward) {
  const fastloop::test::TempDir tmp;
  const std::string prefix = tmp / "bench";
  // Tiny buckets (10 KB): several all-reduces per step, launched while backward still runs.
  auto bench = run({FASTLOOP_CLI, "bench", "--models", "small_cnn", "--rows", "baseline,accumulate", "--nproc", "1,2",
                    "--repeat", "2", "--steps", "3", "--eval-steps", "1", "--warmup", "1", "--batch-size", "8",
                    "--data", "synthetic:3x16x16:64", "--device", "cpu", "--threads", "2", "--bucket-mb", "0.01",
                    "--out", prefix});
  ASSERT_EQ(bench.code, 0) << bench.output;
  const auto json = nlohmann::json::parse(read_file(prefix + ".json"));
  const auto& cells = json.at("cells");
  ASSERT_EQ(cells.size(), 4u);
  int64_t buckets = -1;
  for (size_t i = 0; i < cells.size(); ++i) {
    const auto& cell = cells[i];
    SCOPED_TRACE(cell.dump());
    ASSERT_EQ(cell.at("status"), "ok");
    EXPECT_EQ(cell.at("row"), i < 2 ? "baseline" : "accumulate");
    EXPECT_EQ(cell.at("nproc"), i % 2 == 0 ? 1 : 2);
    EXPECT_EQ(cell.at("threads"), i % 2 == 0 ? 2 : 1) << "2 ranks split the 2 threads";
    EXPECT_GT(cell.at("train_img_per_s").get<double>(), 0.0);
    if (cell.at("nproc") == 1) {
      EXPECT_FALSE(cell.contains("ddp"));
      continue;
    }
    const auto& ddp = cell.at("ddp");
    const auto& one = cells[i - 1];
    EXPECT_GT(ddp.at("buckets").get<int64_t>(), 1);
    if (buckets < 0) buckets = ddp.at("buckets");
    EXPECT_EQ(ddp.at("buckets"), buckets) << "same model, same buckets";
    // One all-reduce per bucket per optimizer step, also with 2 micro-batches (no_sync on the first).
    EXPECT_DOUBLE_EQ(ddp.at("allreduces_per_step").get<double>(), static_cast<double>(buckets));
    EXPECT_GT(ddp.at("comm_span_s").get<double>(), 0.0);
    EXPECT_GE(ddp.at("comm_waited_s").get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(ddp.at("comm_waited_s").get<double>(), cell.at("split").at("communication_s").get<double>());
    const double hidden = ddp.at("comm_hidden_fraction");
    EXPECT_GE(hidden, 0.0);
    EXPECT_LE(hidden, 1.0);
    const double speedup = ddp.at("nproc_speedup");
    EXPECT_NEAR(speedup, cell.at("train_img_per_s").get<double>() / one.at("train_img_per_s").get<double>(), 1e-9);
    EXPECT_DOUBLE_EQ(ddp.at("scaling_efficiency").get<double>(), speedup) << "CPU: the ranks share the same cores";
  }
  const std::string md = read_file(prefix + ".md");
  EXPECT_NE(md.find("## Scaling over ranks"), std::string::npos) << md;
  EXPECT_NE(md.find("small_cnn ×2"), std::string::npos) << md;

  auto zero = run({FASTLOOP_CLI, "bench", "--models", "small_cnn", "--nproc", "1,0"});
  EXPECT_EQ(zero.code, 2) << zero.output;
  EXPECT_NE(zero.output.find("--nproc 0"), std::string::npos) << zero.output;
  auto alone = run({FASTLOOP_CLI, "bench", "--models", "small_cnn", "--rows", "baseline", "--rank-cell", prefix + ".x"});
  EXPECT_EQ(alone.code, 2) << "a rank cell outside a launcher is an input error\n" << alone.output;
  EXPECT_NE(alone.output.find("fastloop bench --nproc N"), std::string::npos) << alone.output;
}
