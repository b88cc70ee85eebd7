// `fastloop bench e2e` (bench/e2e_bench.h): whole training runs against a PyTorch peer process, here a
// stand-in shell script that answers like bench/peers/train_peer.py and notes how many fastloop runs it saw; and
// the peer's command line, which carries the recipe's switches (whitened stem, alternating flips, annealing).
#include "fastloop/bench/e2e_bench.h"
#include "fastloop/core/errors.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

using namespace fastloop;

namespace {

std::vector<int64_t> numbers_in(const std::string& file) {
  std::ifstream in(file);
  std::vector<int64_t> out;
  for (int64_t n = 0; in >> n;) out.push_back(n);
  return out;
}

/// Whether `command` holds `words` (a flag, or a flag and its value) as whole words.
bool has_words(const std::string& command, const std::string& words) {
  return (command + " ").find(" " + words + " ") != std::string::npos;
}

}  // namespace

TEST(BenchE2e, PairsAlternateWhichSideRunsFirstAndRatioIsFastloopOverThePeer) {
  const test::TempDir tmp;
  const std::string dir = tmp.sub("bench_e2e");
  const std::string metrics = dir + "/metrics.jsonl", seen = dir + "/seen.txt";
  std::ofstream(dir + "/peer.sh")
      << "# a stand-in train_peer.py: notes the metric lines fastloop has written so far, answers 50 img/s\n"
      << "if [ -f " << metrics << " ]; then wc -l < " << metrics << " >> " << seen << "; else echo 0 >> " << seen
      << "; fi\n"
      << "echo '{\"torch\": \"9.9.9\", \"img_per_s\": 50.0, \"train_seconds\": 1.0, \"test_accuracy\": 0.5}'\n";
  E2eBenchOptions options;
  options.config = test::tiny_config(128, 32);
  options.config.run.metrics = metrics;
  options.repeat = 3;
  options.python = "/bin/sh";
  options.peer = dir + "/peer.sh";
  const E2eBenchResult result = e2e_bench_run(options);
  ASSERT_EQ(result.pairs.size(), 3u);
  EXPECT_EQ(result.torch_version, "9.9.9");
  const std::vector<int64_t> lines = numbers_in(seen);
  ASSERT_EQ(lines.size(), 3u);
  ASSERT_GT(lines[0], 0) << "pair 1: fastloop first";
  EXPECT_EQ(lines[1], lines[0]) << "pair 2: the peer first, before fastloop's second run";
  EXPECT_EQ(lines[2], 3 * lines[0]) << "pair 3: fastloop first again";
  std::vector<double> ratios;
  for (const E2ePair& pair : result.pairs) {
    EXPECT_DOUBLE_EQ(pair.ratio, pair.fastloop.img_per_s / 50.0);
    ratios.push_back(pair.ratio);
  }
  std::sort(ratios.begin(), ratios.end());
  EXPECT_DOUBLE_EQ(result.ratio_median, ratios[1]);
  EXPECT_DOUBLE_EQ(result.ratio_min, ratios[0]);
  EXPECT_NE(e2e_bench_markdown(result).find("9.9.9"), std::string::npos);
}

TEST(BenchE2e, AFlagThePeerCannotMirrorIsRefusedByName) {
  E2eBenchOptions options;
  options.config = test::tiny_config();
  options.config.perf.accumulate = 2;
  try {
    e2e_bench_run(options);
    ADD_FAILURE() << "no error for --accumulate 2";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--accumulate 1"), std::string::npos) << e.what();
  }
}

TEST(BenchE2e, PeerCommandCarriesTheDefaultRecipesWhitenedStemAlternatingFlipsAndLinearAnnealing) {
  E2eBenchOptions options;
  options.config = test::tiny_config();  // the default recipe (small_cnn, in-memory data) on a small split
  options.python = "python3";
  const std::string command = e2e_peer_command(options);
  for (const char* words : {"--anneal-strategy linear", "--alternate-flip", "--whiten-stem", "--crop-pad 0"})
    EXPECT_TRUE(has_words(command, words)) << words << " missing: " << command;
  EXPECT_FALSE(has_words(command, "--no-flip")) << command;
}

TEST(BenchE2e, PeerCommandLeavesOutWhatTheRunTurnsOff) {
  E2eBenchOptions options;
  options.config = test::tiny_config();
  options.python = "python3";
  options.config.model.whiten_stem = "off";
  options.config.data.alternate_flip = "off";
  options.config.schedule.anneal_strategy = "cos";
  std::string command = e2e_peer_command(options);
  EXPECT_TRUE(has_words(command, "--anneal-strategy cos")) << command;
  EXPECT_FALSE(has_words(command, "--alternate-flip")) << command;
  EXPECT_FALSE(has_words(command, "--whiten-stem")) << command;

  // No flips to alternate: only --no-flip. auto whitens small_cnn only.
  options.config = test::tiny_config();
  options.config.data.alternate_flip = "on";
  options.config.data.flip = false;
  options.config.model.name = "resnet18";
  command = e2e_peer_command(options);
  EXPECT_TRUE(has_words(command, "--no-flip")) << command;
  EXPECT_FALSE(has_words(command, "--alternate-flip")) << command;
  EXPECT_FALSE(has_words(command, "--whiten-stem")) << command;
}
