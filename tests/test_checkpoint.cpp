// Checkpoints: a stopped and resumed run ends bitwise equal to an uninterrupted one (CPU, fixed
// threads); damaged files are clear errors; saving never leaves temporary files or harms the last one.
#include "data_files.h"
#include "test_support.h"
#include "fastloop/core/errors.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/trainer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <fstream>

using namespace fastloop;
namespace fs = std::filesystem;

namespace {
TrainConfig tiny_run(const std::string& dir) {
  TrainConfig config = test::tiny_config(192, 32);
  config.data.workers = 2;
  config.run.epochs = 2;
  config.run.checkpoint_dir = dir;
  config.run.checkpoint_every = 4;
  return config;
}


Classifier restored(const std::string& path) {
  auto checkpoint = Checkpoint::read(path);
  auto model = model_make(ModelOptions("small_cnn").in_channels(1).num_classes(10));
  checkpoint.restore(*model, nullptr, false);
  return model;
}

std::string read_error(const std::string& path) {
  try {
    Checkpoint::read(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Checkpoint, StoppedAndResumedRunEndsBitwiseEqualToUninterrupted) {
  const test::TempDir tmp;
  const auto straight_dir = tmp.sub("straight"), resumed_dir = tmp.sub("resumed");
  TrainControl quiet;
  quiet.progress = false;
  auto straight = train(tiny_run(straight_dir), quiet);
  ASSERT_FALSE(straight.stopped);
  ASSERT_EQ(straight.position.step, 12);  // 2 epochs x 6 batches

  for (int64_t stop_at : {3, 9}) {  // mid-epoch between checkpoints, and in the second epoch
    fs::remove_all(resumed_dir);
    fs::create_directories(resumed_dir);
    TrainControl stopping = quiet;
    stopping.should_stop = [stop_at](const TrainPosition& p) { return p.step == stop_at; };
    auto first = train(tiny_run(resumed_dir), stopping);
    ASSERT_TRUE(first.stopped);
    auto config = tiny_run(resumed_dir);
    config.run.resume = "on";
    auto second = train(config, quiet);
    EXPECT_EQ(second.position.step, 12);
    EXPECT_EQ(second.test.accuracy, straight.test.accuracy);

    auto a = restored(checkpoint_path_in(straight_dir)), b = restored(checkpoint_path_in(resumed_dir));
    auto pa = a->named_parameters(), pb = b->named_parameters();
    for (const auto& item : pa) EXPECT_TRUE(torch::equal(item.value(), pb[item.key()])) << item.key() << " stop " << stop_at;
    auto ba = a->named_buffers(), bb = b->named_buffers();
    for (const auto& item : ba) EXPECT_TRUE(torch::equal(item.value(), bb[item.key()])) << item.key();
  }
  for (const auto& entry : fs::directory_iterator(resumed_dir))
    EXPECT_EQ(entry.path().filename(), "last.ckpt") << "left behind: " << entry.path();
}

TEST(Checkpoint, TruncatedCorruptAndForeignFilesAreClearErrors) {
  const test::TempDir tmp;
  const auto dir = tmp.sub("damaged");
  auto model = model_make(ModelOptions("small_cnn").in_channels(1).num_classes(10));
  const std::string good = dir + "/good.ckpt";
  checkpoint_save(good, *model, nullptr, TrainPosition{1, 2, 3}, "{}");
  auto checkpoint = Checkpoint::read(good);
  EXPECT_EQ(checkpoint.position().step, 3);
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto write = [&](const std::string& name, const std::string& content) {
    std::ofstream(dir + "/" + name, std::ios::binary) << content;
    return dir + "/" + name;
  };
  EXPECT_NE(read_error(write("cut.ckpt", bytes.substr(0, bytes.size() / 2))).find("truncated"), std::string::npos);
  EXPECT_NE(read_error(write("tiny.ckpt", bytes.substr(0, 10))).find("truncated"), std::string::npos);
  std::string flipped = bytes;
  flipped[bytes.size() - 100] ^= 0x5a;
  EXPECT_NE(read_error(write("flip.ckpt", flipped)).find("CRC-32"), std::string::npos);
  EXPECT_NE(read_error(write("text.ckpt", "hello, this is not a checkpoint at all")).find("FLCKPT01"), std::string::npos);
  auto missing = read_error(dir + "/nope.ckpt");
  EXPECT_NE(missing.find("nope.ckpt"), std::string::npos) << missing;
}

// Found by the checkpoint fuzzer: an archive whose size and CRC-32 are right but whose pickled type name is
// damaged made LibTorch throw torch::jit::ErrorReport, not c10::Error, which escaped as a non-InputError.
TEST(Checkpoint, DamagedArchiveBehindAValidCrcIsAClearError) {
  const test::TempDir tmp;
  const auto dir = tmp.sub("damaged_archive");
  auto model = model_make(ModelOptions("small_cnn").in_channels(1).num_classes(10));
  const std::string path = dir + "/last.ckpt";
  checkpoint_save(path, *model, nullptr, TrainPosition{1, 2, 3}, "{}");
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto at = bytes.find("collections\nOrderedDict");
  ASSERT_NE(at, std::string::npos) << "the archive no longer pickles an OrderedDict; pick another name";
  bytes[at + 13] = '&';
  const test_data::Bytes payload(bytes.begin() + 24, bytes.end());  // after the 24-byte header
  const uint32_t crc = test_data::crc32_of(payload);
  for (int i = 0; i < 4; ++i) bytes[16 + i] = static_cast<char>(crc >> (8 * i));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  const auto msg = read_error(path);
  EXPECT_NE(msg.find("unreadable archive"), std::string::npos) << msg;
  EXPECT_NE(msg.find("last.ckpt"), std::string::npos) << msg;
}

TEST(Checkpoint, UnwritableDirectoryKeepsTheLastCheckpoint) {
  const test::TempDir tmp;
  const auto dir = tmp.sub("readonly");
  auto model = model_make(ModelOptions("small_cnn").in_channels(1).num_classes(10));
  const std::string path = dir + "/last.ckpt";
  checkpoint_save(path, *model, nullptr, TrainPosition{0, 0, 1}, "{}");
  EXPECT_THROW(checkpoint_save(dir + "/missing/sub/last.ckpt", *model, nullptr, TrainPosition{}, "{}"),
               std::runtime_error);
  EXPECT_EQ(Checkpoint::read(path).position().step, 1);
}

TEST(Checkpoint, RestoreIntoAnotherArchitectureNamesTheMismatch) {
  const test::TempDir tmp;
  const auto dir = tmp.sub("mismatch");
  auto model = model_make(ModelOptions("small_cnn").in_channels(1).num_classes(10));
  checkpoint_save(dir + "/a.ckpt", *model, nullptr, TrainPosition{}, "{}");
  auto other = model_make(ModelOptions("resnet18").in_channels(1).num_classes(10));
  auto checkpoint = Checkpoint::read(dir + "/a.ckpt");
  EXPECT_THROW(checkpoint.restore(*other, nullptr, false), InputError);
}

TEST(Checkpoint, DiskFullWhileSavingIsAClearErrorAndKeepsTheLastCheckpoint) {
  const test::TempDir tmp;
  const auto dir = tmp.sub("disk_full");
  auto model = model_make(ModelOptions("small_cnn").in_channels(1).num_classes(10));
  const std::string path = dir + "/last.ckpt";
  checkpoint_save(path, *model, nullptr, TrainPosition{0, 0, 1}, "{}");
  const auto good_size = fs::file_size(path);
  // A file-size limit below the checkpoint's size fails its writes as a full disk does (EFBIG instead of
  // ENOSPC, on the same write path), for this process only and without root.
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message;
  try {
    checkpoint_save(path, *model, nullptr, TrainPosition{0, 0, 2}, "{}");
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(message.find("checkpoint not saved"), std::string::npos) << message;
  EXPECT_NE(message.find("the last checkpoint is intact"), std::string::npos) << message;
  EXPECT_EQ(Checkpoint::read(path).position().step, 1);
  EXPECT_EQ(fs::file_size(path), good_size);
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename(), "last.ckpt") << "a temporary file was left behind";
}

TEST(Checkpoint, MissingCheckpointDirIsCreatedAndAnUncreatableOneIsAnInputError) {
  const test::TempDir tmp;
  const auto dir = tmp.sub("made") + "/runs/a";
  auto config = tiny_run(dir);
  config.run.epochs = 1;
  config.run.max_steps = 2;
  train(config);
  EXPECT_EQ(Checkpoint::read(dir + "/last.ckpt").position().step, 2);

  const auto file = tmp.sub("blocked") + "/file";
  std::ofstream(file) << "not a folder";
  config.run.checkpoint_dir = file + "/sub";
  EXPECT_THROW(train(config), InputError);
}
