// The ```sh blocks of README.md and docs/*.md as tests/test_readme.cpp walks them: their commands by page and
// section, the other tools' prefixes, and the one table of fastloop commands the default tests do not run,
// each with its reason.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace fastloop {

/// One command of a ```sh block: its page (relative to the repository root), section heading, first line
/// number and text (a line ending in `\` joined with the next, comments dropped).
struct ReadmeCommand {
  std::string file;
  std::string section;
  int line = 0;
  std::string text;
};

/// The pages whose commands and links the tests check: README.md, then docs/*.md in name order.
inline std::vector<std::string> readme_pages() {
  std::vector<std::string> pages;
  const std::filesystem::path root = std::filesystem::path(FASTLOOP_TEST_DIR).parent_path();
  if (std::filesystem::is_directory(root / "docs"))
    for (const auto& entry : std::filesystem::directory_iterator(root / "docs"))
      if (entry.path().extension() == ".md") pages.push_back("docs/" + entry.path().filename().string());
  std::sort(pages.begin(), pages.end());
  pages.insert(pages.begin(), "README.md");
  return pages;
}

inline std::vector<ReadmeCommand> readme_sh_commands() {
  std::vector<ReadmeCommand> commands;
  for (const std::string& page : readme_pages()) {
    std::ifstream in(std::filesystem::path(FASTLOOP_TEST_DIR).parent_path() / page);
    std::string section, pending;
    bool in_sh = false, in_fence = false;
    int number = 0, first = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      if (!in_fence && line.rfind("## ", 0) == 0) section = line;
      if (line.rfind("```", 0) == 0) {
        in_sh = !in_fence && line == "```sh";
        in_fence = !in_fence;
        continue;
      }
      if (!in_sh) continue;
      line = std::regex_replace(line, std::regex("(^|\\s+)#.*$"), "");
      line = std::regex_replace(line, std::regex("^\\s+|\\s+$"), "");
      const bool continues = !line.empty() && line.back() == '\\';
      if (continues) line = std::regex_replace(line.substr(0, line.size() - 1), std::regex("\\s+$"), "");
      if (pending.empty()) first = number;
      if (!line.empty()) pending += (pending.empty() ? "" : " ") + line;
      if (continues || pending.empty()) continue;
      commands.push_back({page, section, first, pending});
      pending.clear();
    }
  }
  return commands;
}

inline bool readme_is_fastloop(const std::string& text) {
  return std::regex_search(text, std::regex("^(build/)?fastloop( |$)"));
}

/// The fastloop lines of `heading`'s ```sh blocks, in whichever page has that heading.
inline std::vector<std::string> readme_commands(const std::string& heading) {
  std::vector<std::string> commands;
  for (const auto& c : readme_sh_commands())
    if (c.section == heading && readme_is_fastloop(c.text)) commands.push_back(c.text);
  return commands;
}

/// How the lines of ```sh blocks that are not fastloop commands start: scripts CI runs, Python, CMake and
/// other launchers, the benchmark's peer scripts (bench/peers/run.sh: venvs of other libraries, minutes). A line
/// that is neither fails the test, so a new command cannot slip past it.
inline const char* const kReadmeOtherTools[] = {"scripts/", "python ", ".venv/bin/python ", "pip ", "cmake ", "torchrun ", "srun ",
                                         "sbatch ", "TSAN_OPTIONS=", "CMAKE_PREFIX_PATH=", "FASTLOOP_CMAKE_ARGS=",
                                         "SANITIZE_ONLY=", "bench/peers/"};

/// The fastloop commands of the README the default tests do not run, each with why. `slow` ones run, as the
/// others do, in Readme.DISABLED_EverySlowCommandRunsAsWritten (--gtest_also_run_disabled_tests, ~3.5 min
/// on 2 cores).
/// An entry no longer in the README fails the test, so the table stays true.
struct ReadmeNotRun {
  const char* command;
  const char* reason;
  bool slow;  // runs in the DISABLED_ test; else never (another machine, a GPU)
};
inline const ReadmeNotRun kReadmeNotRun[] = {
    {"build/fastloop bench --full --data cifar10:DIR",
     "slow: 5 whole epochs x 4 repetitions per cell plus the GEMM probe, ~30 s on small_cnn's baseline row alone "
     "(tests/test_bench_grid.cpp covers --full)", true},
    {"build/fastloop bench --nproc 1,2 --rows baseline,amp,accumulate,channels-last "
     "--out bench/results/cpu-2core/scaling",
     "slow: 8 cells, 4 of them launched as 2 rank processes, plus the GEMM probe, ~30 s (tests/test_dist.cpp runs "
     "bench --nproc 1,2)", true},
    {"build/fastloop bench --models resnet18 --rows baseline,amp,channels-last --compare-python --out /tmp/b",
     "slow: --compare-python starts the PyTorch peer beside each cell, ~40 s at 1 step (the bench loader and e2e "
     "lines run their peers; tests/test_python_peer.cpp the pairing)",
     true},
    {"fastloop bench --models resnet18,torchscript:r18.pt --rows baseline,amp",
     "slow: a grid of resnet18 and the scripted torchvision resnet18 plus the GEMM probe, ~30 s "
     "(tests/test_torchscript_runs.cpp trains scripted models)", true},
    {"fastloop bench --models torchscript:r18.pt --twin resnet18 --compare-python",
     "slow: 16 rows x (scripted, twin, PyTorch peer's two cells), ~80 s at 1 step (tests/test_python_peer.cpp "
     "covers the twin's interleaving)", true},
    {"build/fastloop train --data videofolder:/data/kinetics --model torchscript:r3d.pt --clip-frames 16 --clip-step 2 "
     "--transform \"RandomResizedCrop(112), RandomHorizontalFlip(), ToDtype(torch.float32, scale=True), "
     "Normalize((0.43216, 0.394666, 0.37645), (0.22803, 0.22145, 0.216989))\" --eval-transform \"Resize(128), "
     "CenterCrop(112), ToDtype(torch.float32, scale=True), Normalize((0.43216, 0.394666, 0.37645), (0.22803, "
     "0.22145, 0.216989))\" --batch-size 8 --epochs 10 --checkpoint-dir ckpt",
     "needs a folder of videos (ffmpeg) and the scripted r3d_18 the line before makes: "
     "tests/python/test_cli_video.py::test_getting_started_cli_video_example_runs runs the whole block so",
     false},
    {"build/fastloop launch --nnodes 2 --node-rank 0 --nproc-per-node 4 --master-addr 10.0.0.1 --master-port 29500 "
     "-- train ...",
     "needs two nodes: rank 0 waits for node 1 at 10.0.0.1 (the one-node launch line runs; tests/test_dist*.cpp "
     "cover the rendezvous)", false},
};

inline const ReadmeNotRun* readme_not_run(const std::string& text) {
  for (const auto& e : kReadmeNotRun)
    if (text == e.command) return &e;
  return nullptr;
}

/// Commands that start the venv's Python (a PyTorch peer, the ONNX conversion) or read r18.pt, the
/// module the README's `python -c` line scripts with torchvision.
inline bool readme_needs_python(const std::string& text) {
  return text.find("--compare-python") != std::string::npos ||
         std::regex_search(text, std::regex("(torchscript:|models )r18\\.pt( |$)")) ||
         (std::regex_search(text, std::regex(" bench e2e( |$)")) && text.find("--no-python") == std::string::npos) ||
         std::regex_search(text, std::regex(" --out \\S+\\.onnx( |$)"));
}

/// The commands outside "Using it" (EveryCommandOfUsingItRunsAsWritten runs those) to run, in page order:
/// those that start Python (`python`) or the others.
inline std::vector<std::string> readme_other_commands(bool python) {
  std::vector<std::string> commands;
  for (const auto& c : readme_sh_commands()) {
    if (!readme_is_fastloop(c.text) || c.section == "## Using it" || readme_not_run(c.text)) continue;
    if (readme_needs_python(c.text) == python) commands.push_back(c.text);
  }
  return commands;
}

/// The commands of kReadmeNotRun marked slow, in README order.
inline std::vector<std::string> readme_slow_commands() {
  std::vector<std::string> commands;
  for (const auto& c : readme_sh_commands()) {
    const ReadmeNotRun* e = readme_not_run(c.text);
    if (e && e->slow) commands.push_back(c.text);
  }
  return commands;
}

}  // namespace fastloop
