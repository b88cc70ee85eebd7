// Every `build/fastloop` or `fastloop` line of the ```sh blocks of README.md and docs/*.md runs as written, in
// order, in a fresh folder that stands for the repository root (its recipes/, tools/ and .venv linked), or
// stands in kReadmeNotRun with its reason; every other line of those blocks is another tool's
// (kReadmeOtherTools). The placeholders a line names (cifar10:DIR, /data/..., photos/, ckpt/last.ckpt,
// r18.pt, ...) are made here first, and long runs are shortened by flags appended or replaced:
// readme_shortened() lists them. Every relative link of those pages names a file of the repository.
#include "readme_commands.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace fastloop {
namespace {

namespace fs = std::filesystem;

/// 5 train batches of `per_file` records and a test batch of 50, in CIFAR-10's binary format.
void cifar_write(const std::string& dir, int per_file) {
  auto batch = [](const std::string& path, int records) {
    std::ofstream out(path, std::ios::binary);
    for (int r = 0; r < records; ++r) {
      out.put(static_cast<char>(r % 10));
      for (int i = 0; i < 3072; ++i) out.put(static_cast<char>((r * 7 + i) % 256));
    }
  };
  for (int f = 1; f <= 5; ++f) batch(dir + "/data_batch_" + std::to_string(f) + ".bin", per_file);
  batch(dir + "/test_batch.bin", 50);
}

/// A Fashion-MNIST of `train` and `test` 28x28 images (uncompressed IDX files), for the default recipe's
/// lines: its 10,000 test images would take most of a short run's time.
void readme_fashion_write(const std::string& dir, int train, int test) {
  auto be32 = [](std::ofstream& out, uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out.put(static_cast<char>(v >> s));
  };
  auto split = [&](const std::string& prefix, int n) {
    std::ofstream images(dir + "/" + prefix + "-images-idx3-ubyte", std::ios::binary);
    be32(images, 0x803), be32(images, n), be32(images, 28), be32(images, 28);
    for (int k = 0; k < n; ++k)
      for (int i = 0; i < 28 * 28; ++i) images.put(static_cast<char>((k * 7 + i) % 256));
    std::ofstream labels(dir + "/" + prefix + "-labels-idx1-ubyte", std::ios::binary);
    be32(labels, 0x801), be32(labels, n);
    for (int k = 0; k < n; ++k) labels.put(static_cast<char>(k % 10));
  };
  split("train", train);
  split("t10k", test);
}

const std::string kReadmeGoldenImages = FASTLOOP_TEST_DIR "/golden/images/";
const char* const kReadmeImages[] = {"rgb.jpg", "gray.jpg", "cmyk.jpg", "progressive.jpg", "rgb444.jpg",
                                     "rgb.png", "rgba.png", "palette.png", "gray16.png", "gray.png"};

/// DIR/{train,val}/c0..c4, two of the golden images in each: an image folder of five classes.
void readme_images_write(const std::string& dir) {
  for (const char* split : {"train", "val"}) {
    for (int i = 0; i < 10; ++i) {
      const char* const classes[] = {"c0", "c1", "c2", "c3", "c4"};
      const fs::path cls = fs::path(dir) / split / classes[i / 2];
      fs::create_directories(cls);
      fs::copy_file(kReadmeGoldenImages + kReadmeImages[i], cls / kReadmeImages[i]);
    }
  }
}

/// The test's stand-in for the repository root and the data its commands name.
struct ReadmeWorkspace {
  std::string work, cifar, fashion, images;
};

ReadmeWorkspace readme_workspace(const test::TempDir& tmp) {
  ReadmeWorkspace ws{tmp.sub("work"), tmp.sub("cifar10"), tmp.sub("fashion-mnist"), tmp.sub("images")};
  cifar_write(ws.cifar, 64);  // 320 train images: a batch of 128 twice
  readme_fashion_write(ws.fashion, 512, 128);
  readme_images_write(ws.images);
  for (const char* linked : {"recipes", "tools"})
    fs::create_directory_symlink(fs::path(FASTLOOP_TEST_DIR).parent_path() / linked, fs::path(ws.work) / linked);
  // the bench's Python peers (`bench --compare-python` runs bench/peers/bench_peer.py), not its results/
  fs::create_directories(fs::path(ws.work) / "bench");
  fs::create_directory_symlink(fs::path(FASTLOOP_TEST_DIR).parent_path() / "bench/peers", fs::path(ws.work) / "bench/peers");
  if (test::venv_present())  // .venv/bin/python, as in the repository (the peers' default interpreter)
    fs::create_directory_symlink(fs::path(FASTLOOP_PYTHON).parent_path().parent_path(), fs::path(ws.work) / ".venv");
  return ws;
}

/// The README's `python ...` line that writes `what`, run by the venv's Python.
std::string readme_python_line(const std::string& what) {
  for (const auto& c : readme_sh_commands())
    if (c.text.rfind("python ", 0) == 0 && c.text.find(what) != std::string::npos)
      return test::python_word().append(c.text.substr(6));
  ADD_FAILURE() << "no README line `python ...` writes " << what;
  return "false";
}

/// Runs `args` (fastloop's, shell syntax) in the work folder for a placeholder; fails the test if it fails.
void readme_make(const ReadmeWorkspace& ws, const std::string& args) {
  const auto r = test::shell_run("cd " + test::quoted(ws.work) + " && " + test::cli_word() + " " + args);
  EXPECT_EQ(r.code, 0) << "making a placeholder: fastloop " << args << "\n" << r.output;
}

/// Makes what `command` reads but no README line before it writes: data, checkpoints, weights, metrics.
void readme_prepare(const std::string& command, const ReadmeWorkspace& ws) {
  const fs::path work(ws.work);
  auto names = [&](const std::string& what) { return command.find(what) != std::string::npos; };
  // Checkpoints a line reads that no line before it in this run wrote (each test runs in its own folder):
  // the image folder's five RGB classes (predict's files fit), or the small Fashion-MNIST for runs/fm.
  for (const char* dir : {"ckpt", "runs/pets", "runs/fm"}) {
    const std::string ckpt = std::string(dir) + "/last.ckpt";
    if (!std::regex_search(command, std::regex("(^| |/)" + ckpt + "( |$)")) || fs::exists(work / ckpt)) continue;
    const std::string data = std::string(dir) == "runs/fm" ? "fashion-mnist:" + ws.fashion : "imagefolder:" + ws.images;
    readme_make(ws, "train --data " + data + " --image-size 32 --batch-size 5 --max-steps 2 --checkpoint-dir " + dir);
  }
  const bool r18 =
      names("runs/r18/last.ckpt") || names("--init-from r18.safetensors") || names("made_in_python.safetensors");
  if (r18 && !fs::exists(work / "runs/r18/last.ckpt"))
    readme_make(ws, "train --model resnet18 --data cifar10:" + ws.cifar +
                        " --batch-size 16 --max-steps 1 --checkpoint-dir runs/r18");
  if (std::regex_search(command, std::regex("(torchscript:|models )r18\\.pt( |$)")) && !fs::exists(work / "r18.pt")) {
    const auto r = test::shell_run("cd " + test::quoted(ws.work) + " && " + readme_python_line("'r18.pt'"));  // the page's own
    EXPECT_EQ(r.code, 0) << "making r18.pt with the README's python line\n" << r.output;
  }
  if (names("--init-from r18.safetensors") && !fs::exists(work / "r18.safetensors"))
    readme_make(ws, "export --checkpoint runs/r18/last.ckpt --out r18.safetensors");
  if (names("made_in_python.safetensors") && !fs::exists(work / "made_in_python.safetensors"))
    readme_make(ws, "export --checkpoint runs/r18/last.ckpt --out made_in_python.safetensors");
  if (names("photos/") && !fs::exists(work / "photos")) {
    fs::create_directories(work / "photos/sub");
    fs::copy_file(kReadmeGoldenImages + "gray.jpg", work / "photos/gray.jpg");
    fs::copy_file(kReadmeGoldenImages + "rgb.png", work / "photos/sub/rgb.png");
  }
  if (names("more.jpg") && !fs::exists(work / "more.jpg"))
    fs::copy_file(kReadmeGoldenImages + "rgb.jpg", work / "more.jpg");
  static const std::regex jsonl("(^| )(\\S+\\.jsonl)");  // metrics a `plot` line reads
  if (names(" plot "))
    for (std::sregex_iterator m(command.begin(), command.end(), jsonl), end; m != end; ++m)
      if (!fs::exists(work / (*m)[2].str()))
        readme_make(ws, "train --data synthetic:1x12x12:64 --batch-size 16 --max-steps 2 --metrics " + (*m)[2].str());
  // --out into a folder of the repository (bench/results/...): the same folder, empty, here.
  static const std::regex out(" --out (\\S+)/[^/ ]+");
  std::smatch m;
  if (std::regex_search(command, m, out) && m[1].str()[0] != '/' &&
      fs::is_directory(fs::path(FASTLOOP_TEST_DIR).parent_path() / m[1].str()))
    fs::create_directories(work / m[1].str());
}

/// `command` with each `flag value`: the README's value replaced, else the flag appended.
std::string readme_flags_set(std::string command, const std::vector<std::pair<std::string, std::string>>& flags) {
  for (const auto& [flag, value] : flags) {
    const std::regex given(" " + flag + " \\S+");
    if (std::regex_search(command, given)) command = std::regex_replace(command, given, " " + flag + " " + value);
    else command += " " + flag + " " + value;
  }
  return command;
}

/// `fastloop ...` or `build/fastloop ...` as the CLI built here, its path one shell word (a string, not a
/// regex replacement: the path may hold any character).
std::string readme_program_replaced(const std::string& command) {
  for (const std::string program : {"build/fastloop", "fastloop"})
    if (command.rfind(program, 0) == 0) return test::cli_word() + command.substr(program.size());
  return command;
}

/// The command as the test runs it: the CLI built here, the placeholders' data, /tmp/X in the test's
/// folder, a trailing `...` (your flags) the small CIFAR-10, and long runs short:
/// - training (train, launch ... -- train, bench e2e): --max-steps 2 (the end of --profile-steps A:B, and
///   no --time-budget then), batch 16 where the line sets none; the default recipe's Fashion-MNIST a small
///   one; an image folder at batch 4 and 32 px, its --transform's 224-px crops 32 px;
/// - bench grids: 1 repetition of 1 step (and 1 eval batch) at batch 2, no warm-up; small_cnn where the line
///   names no --models; --full on its baseline row;
/// - bench e2e: 1 pair of runs; bench loader: 2 batches, 1 repetition, 512 images;
/// - tune: 2 trials of 1 warm-up and 1 timed step, at batch 16; synthetic data of 128 images.
std::string readme_shortened(std::string command, const ReadmeWorkspace& ws) {
  auto has = [&](const std::string& what) { return std::regex_search(command, std::regex(what)); };
  // /tmp/X of the README into the test's folder first: the CLI's own path may lie under /tmp too.
  const std::string tmp = fs::path(ws.work).parent_path().string();
  command = std::regex_replace(command, std::regex("(^| )/tmp/"), "$1" + tmp + "/tmp_");
  command = readme_program_replaced(command);
  command = std::regex_replace(command, std::regex("cifar10:DIR"), "cifar10:" + ws.cifar);
  command = std::regex_replace(command, std::regex("imagefolder:/data/\\S+"), "imagefolder:" + ws.images);
  command = std::regex_replace(command, std::regex("(^| )/data/pets"), "$1" + ws.images);  // its val/ folder
  command = std::regex_replace(command, std::regex(" fashion-mnist( |$)"), " fashion-mnist:" + ws.fashion + "$1");
  command = std::regex_replace(command, std::regex(" \\.\\.\\.$"), " --data cifar10:" + ws.cifar);  // "your flags"
  command = std::regex_replace(command, std::regex("(synthetic:\\d+x\\d+x\\d+)( |$)"), "$1:128$2");
  const bool bench = has(" bench( |$)"), e2e = has(" bench e2e( |$)"), loader = has(" bench loader( |$)");
  const bool trains = (has(" train( |$)") || e2e) && !has("--help");
  if (trains) {
    if (!has(" --data ") && !has(" --config ")) command += " --data fashion-mnist:" + ws.fashion;
    std::smatch profile;
    if (std::regex_search(command, profile, std::regex(" --profile-steps \\d+:(\\d+)"))) {
      command = readme_flags_set(command, {{"--max-steps", profile[1].str()}, {"--batch-size", "16"}});
    } else {
      command = readme_flags_set(command, {{"--max-steps", "2"}});
    }
    if (has(" --data imagefolder:")) {
      command = readme_flags_set(command, {{"--batch-size", "4"}, {"--image-size", "32"}});
      // a --transform's crop ends at the image size: ImageNet's 224 (after Resize(256)) becomes 32 (36)
      command = std::regex_replace(command, std::regex("\\((224|256)([,)])"), "(32$2");
      command = std::regex_replace(command, std::regex("Resize\\(32\\)"), "Resize(36)");
    }
    else if (!has(" --batch-size ") && !has(" --config "))
      command += " --batch-size 16";
  }
  if (e2e) command = readme_flags_set(command, {{"--repeat", "1"}});
  if (loader)
    command = readme_flags_set(command,
                               {{"--batches", "2"}, {"--repeats", "1"}, {"--python-batches", "2"}, {"--images", "512"}});
  if (bench && !e2e && !loader) {
    command = readme_flags_set(command, {{"--repeat", "1"}, {"--steps", "1"}, {"--eval-steps", "1"}, {"--warmup", "0"}});
    if (!has(" --full")) command = readme_flags_set(command, {{"--batch-size", "2"}});
    if (!has(" --models ")) command += " --models small_cnn";
    if (has(" --full") && !has(" --rows ")) command += " --rows baseline";
  }
  if (has(" tune( |$)"))
    command = readme_flags_set(command,
                               {{"--batch-size", "16"}, {"--trials", "2"}, {"--tune-warmup", "1"}, {"--tune-steps", "1"}});
  return command;
}

/// What a command with `--out PATH` must have written: bench, tune and the other commands' files.
std::string readme_out_file(const std::string& command) {
  std::smatch m;
  if (!std::regex_search(command, m, std::regex(" --out (\\S+)"))) return "";
  const bool prefix = std::regex_search(command, std::regex(" bench( |$)"));  // PREFIX.md, PREFIX.json, ...
  return m[1].str() + (prefix ? ".md" : "");
}

/// Runs `commands` in order in a fresh workspace, each after its placeholders are made.
void readme_run_in_order(const std::vector<std::string>& commands) {
  const test::TempDir tmp;
  const ReadmeWorkspace ws = readme_workspace(tmp);
  for (const auto& command : commands) {
    readme_prepare(command, ws);
    const std::string run = readme_shortened(command, ws);
    const auto start = std::chrono::steady_clock::now();
    const auto r = test::shell_run("cd " + test::quoted(ws.work) + " && " + run);
    std::printf("readme: %.1f s  %s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                command.c_str());
    std::fflush(stdout);  // a line per command as it ends: where a run's time goes
    EXPECT_EQ(r.code, 0) << command << "\nran as: " << run << "\n" << r.output;
    const std::string out = readme_out_file(run);
    if (r.code == 0 && !out.empty()) {
      EXPECT_TRUE(fs::exists(out[0] == '/' ? fs::path(out) : fs::path(ws.work) / out)) << command << ": no " << out;
    }
  }
}

/// The command as the test runs it: the CLI built here, a small CIFAR-10, the default recipe's Fashion-MNIST a
/// small one (training lines without --data or --config, and predict's `fashion-mnist` source), training
/// lines short.
std::string runnable(std::string command, const std::string& cifar, const std::string& fashion) {
  command = readme_program_replaced(command);
  command = std::regex_replace(command, std::regex("cifar10:DIR"), "cifar10:" + cifar);
  command = std::regex_replace(command, std::regex("(synthetic:\\d+x\\d+x\\d+)( |$)"), "$1:512$2");  // a short test split
  command = std::regex_replace(command, std::regex(" fashion-mnist( |$)"), " fashion-mnist:" + fashion + "$1");
  const bool trains = std::regex_search(command, std::regex(" train( |$)")) && command.find("--help") == std::string::npos;
  if (trains && command.find(" --data ") == std::string::npos && command.find(" --config ") == std::string::npos)
    command += " --data fashion-mnist:" + fashion;
  if (trains) {
    command = std::regex_replace(command, std::regex(" --max-steps \\d+"), "");
    command += command.find("--resume") != std::string::npos ? " --max-steps 4" : " --max-steps 2";
  }
  return command;
}

TEST(Readme, EveryCommandOfUsingItRunsAsWritten) {
  const auto commands = readme_commands("## Using it");
  ASSERT_GE(commands.size(), 8u) << "docs/getting-started.md's \"Using it\" block lost its commands";
  EXPECT_EQ(commands.front(), "build/fastloop train") << "\"Using it\" starts with the default recipe";
  const test::TempDir tmp;
  const std::string cifar = tmp.sub("cifar10");
  cifar_write(cifar, 64);  // 320 train images: more than the seed recipe's batch of 128 twice
  const std::string fashion = tmp.sub("fashion-mnist");
  readme_fashion_write(fashion, 512, 128);
  const std::string work = tmp.sub("work");  // the repository root as the commands see it: its recipes/
  std::filesystem::create_directory_symlink(FASTLOOP_TEST_DIR "/../recipes", work + "/recipes");
  for (const auto& command : commands) {
    const auto r = test::shell_run("cd " + test::quoted(work) + " && " + runnable(command, cifar, fashion));
    EXPECT_EQ(r.code, 0) << command << "\n" << r.output;
    if (command == "build/fastloop train") {  // no flags: the default recipe, --perf auto included
      EXPECT_NE(r.output.find("perf auto:"), std::string::npos) << r.output;
      EXPECT_NE(r.output.find("fashion-mnist"), std::string::npos) << r.output;
    }
    if (command.rfind("build/fastloop models", 0) == 0) {
      EXPECT_NE(r.output.find("resnet18"), std::string::npos) << r.output;
      EXPECT_NE(r.output.find("no imagenet stem"), std::string::npos) << "small_cnn has the cifar stem only\n" << r.output;
    }
    if (command.find("--resume") != std::string::npos) {
      EXPECT_NE(r.output.find("resumed from ckpt/last.ckpt"), std::string::npos) << r.output;
    }
  }
}

TEST(Readme, EveryOtherCommandRunsAsWrittenOrIsExcludedWithAReason) {
  const auto commands = readme_sh_commands();
  ASSERT_GE(commands.size(), 40u) << "the ```sh blocks of README.md and docs/*.md lost their commands";
  for (const auto& c : commands) {
    const bool other_tool = std::any_of(std::begin(kReadmeOtherTools), std::end(kReadmeOtherTools),
                                        [&](const char* p) { return c.text.rfind(p, 0) == 0; });
    EXPECT_TRUE(readme_is_fastloop(c.text) || other_tool)
        << c.file << ":" << c.line << " (" << c.section << "): neither a fastloop command this test runs nor "
        << "another tool's line (kReadmeOtherTools): " << c.text;
  }
  for (const auto& e : kReadmeNotRun) {
    const bool listed =
        std::any_of(commands.begin(), commands.end(), [&](const ReadmeCommand& c) { return c.text == e.command; });
    EXPECT_TRUE(listed) << "kReadmeNotRun lists a command no page has any more: " << e.command;
    EXPECT_GT(std::string(e.reason).size(), 20u) << e.command;
  }
  const auto runs = readme_other_commands(false);
  ASSERT_GE(runs.size(), 15u);
  readme_run_in_order(runs);
}

TEST(Readme, EveryCommandThatStartsPythonRunsAsWritten) {
  FASTLOOP_SKIP_WITHOUT_VENV();
  const auto runs = readme_other_commands(true);
  ASSERT_GE(runs.size(), 4u);
  readme_run_in_order(runs);
}

TEST(Readme, DISABLED_EverySlowCommandRunsAsWritten) {
  FASTLOOP_SKIP_WITHOUT_VENV();  // most start the PyTorch peer
  const auto runs = readme_slow_commands();
  ASSERT_EQ(runs.size(), static_cast<size_t>(std::count_if(std::begin(kReadmeNotRun), std::end(kReadmeNotRun),
                                                           [](const ReadmeNotRun& e) { return e.slow; })));
  readme_run_in_order(runs);
}

}  // namespace
}  // namespace fastloop

