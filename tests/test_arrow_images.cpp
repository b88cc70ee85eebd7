// Arrow sources: a binary column taken over through the C data interface (read in place, released once,
// nulls and malformed layouts named), ArrowTableImages' row map, and ArrowGroupImages' reader thread (every
// sample's bytes whatever the order and the keep-ahead bound, each row group read once per plan, the epoch
// order of shards of the same sizes, a reader's error and a cancel reaching the waiting worker; several image
// columns read together, and a dropped read letting its kept parts go).
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/arrow_images.h"
#include "fastloop/data/sources/shard_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <random>
#include <thread>

namespace fastloop {
namespace {

std::atomic<int> released{0};

// A binary array made as a producer makes one: its buffers in private_data, freed by its release.
struct Produced {
  std::vector<int32_t> offsets{0};
  std::string data;
  std::vector<uint8_t> validity;
  const void* buffers[3] = {nullptr, nullptr, nullptr};
};

ArrowArray binary_array(const std::vector<std::string>& values, int64_t null_row = -1) {
  auto* p = new Produced;
  for (const std::string& v : values) p->data += v, p->offsets.push_back(static_cast<int32_t>(p->data.size()));
  if (null_row >= 0) {
    p->validity.assign((values.size() + 7) / 8, 0xff);
    p->validity[static_cast<size_t>(null_row / 8)] &= static_cast<uint8_t>(~(1u << (null_row % 8)));
    p->buffers[0] = p->validity.data();
  }
  p->buffers[1] = p->offsets.data();
  p->buffers[2] = p->data.data();
  ArrowArray a{};
  a.length = static_cast<int64_t>(values.size());
  a.null_count = null_row >= 0 ? 1 : 0;
  a.n_buffers = 3;
  a.buffers = p->buffers;
  a.private_data = p;
  a.release = [](ArrowArray* array) {
    delete static_cast<Produced*>(array->private_data);
    array->release = nullptr;
    ++released;
  };
  return a;
}

// Group g of `sizes` holds "g:r" for each of its rows r.
std::vector<std::string> group_values(int64_t g, int64_t rows) {
  std::vector<std::string> values;
  for (int64_t r = 0; r < rows; ++r) values.push_back(std::to_string(g) + ":" + std::to_string(r));
  return values;
}

TEST(ArrowColumn, ReadsInPlaceAndReleasesOnce) {
  released = 0;
  {
    ArrowArray produced = binary_array({"abc", "", "de"});
    ArrowBinaryColumn column(std::move(produced), "z", "f.parquet, row group 0");
    EXPECT_EQ(produced.release, nullptr) << "the producer's struct is left released (moved)";
    ArrowBinaryColumn moved(std::move(column));
    ASSERT_EQ(moved.size(), 3);
    EXPECT_EQ(moved.value(0), "abc");
    EXPECT_EQ(moved.value(1), "");
    EXPECT_EQ(moved.value(2), "de");
    EXPECT_EQ(released, 0);
  }
  EXPECT_EQ(released, 1);
}

TEST(ArrowColumn, HonoursTheArraysOffset) {
  ArrowArray produced = binary_array({"a", "bb", "ccc", "dddd"});
  produced.offset = 2;
  produced.length = 2;
  ArrowBinaryColumn column(std::move(produced), "z", "slice");
  EXPECT_EQ(column.value(0), "ccc");
  EXPECT_EQ(column.value(1), "dddd");
}

TEST(ArrowColumn, NamesANullCellAnotherFormatAndABadLayoutAndStillReleases) {
  released = 0;
  try {
    ArrowBinaryColumn(binary_array({"a", "b", "c"}, 2), "z", "x.parquet, row group 4");
    FAIL() << "a null cell was taken";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "x.parquet, row group 4, row 2: the image cell is null (no bytes); drop the row or store "
                           "the image's encoded file there");
  }
  EXPECT_THROW(ArrowBinaryColumn(binary_array({"a"}), "u", "strings"), InputError);
  ArrowArray odd = binary_array({"a"});
  odd.n_buffers = 2;
  EXPECT_THROW(ArrowBinaryColumn(std::move(odd), "z", "odd"), InputError);
  ArrowArray backwards = binary_array({"ab", "c"});
  static_cast<Produced*>(backwards.private_data)->offsets[2] = 1;  // 0, 2, 1
  EXPECT_THROW(ArrowBinaryColumn(std::move(backwards), "z", "backwards"), InputError);
  EXPECT_EQ(released, 4) << "each refused array is released";
}

TEST(ArrowTableImages, MapsSamplesToRowsAcrossChunks) {
  auto columns = std::make_shared<std::vector<ArrowBinaryColumn>>();
  columns->emplace_back(binary_array({"r0", "r1"}), "z", "chunk 0");
  columns->emplace_back(binary_array({"r2", "r3", "r4"}), "z", "chunk 1");
  std::shared_ptr<const std::vector<ArrowBinaryColumn>> shared = columns;
  ArrowTableImages images(shared, {4, 0, 2}, {1, 0, 1}, "ds");
  std::string scratch;
  ASSERT_EQ(images.size(), 3);
  EXPECT_EQ(images.bytes(0, scratch), "r4");
  EXPECT_EQ(images.bytes(1, scratch), "r0");
  EXPECT_EQ(images.bytes(2, scratch), "r2");
  EXPECT_EQ(images.name(2), "ds[2]");
  ArrowTableImages whole(shared, {}, {0, 0, 0, 0, 0}, "ds");
  EXPECT_EQ(whole.bytes(3, scratch), "r3");
  EXPECT_THROW(ArrowTableImages(shared, {5}, {0}, "ds"), InputError);
  EXPECT_THROW(ArrowTableImages(shared, {}, {0}, "ds"), InputError);
}

const std::vector<int64_t> kGroupSizes = {5, 3, 7, 4, 6};

std::vector<ArrowBinaryColumn> one(ArrowBinaryColumn column) {
  std::vector<ArrowBinaryColumn> out;
  out.push_back(std::move(column));
  return out;
}

// A split of kGroupSizes whose reader counts its reads of each group; part k > 0 of row r holds "g:r/k".
struct Groups {
  std::vector<std::atomic<int>> reads = std::vector<std::atomic<int>>(kGroupSizes.size());
  std::unique_ptr<ArrowGroupImages> make(int64_t shuffle_buffer, int64_t keep_ahead, int64_t failing = -1,
                                         int64_t cache_bytes = 0, int64_t parts = 1) {
    std::vector<ArrowGroup> groups;
    std::vector<int64_t> labels;
    for (size_t g = 0; g < kGroupSizes.size(); ++g) {
      groups.push_back({"f.parquet, row group " + std::to_string(g), kGroupSizes[g]});
      for (int64_t r = 0; r < kGroupSizes[g]; ++r) labels.push_back(static_cast<int64_t>(g));
    }
    auto reader = [this, failing, parts](int64_t g) {
      ++reads[static_cast<size_t>(g)];
      if (g == failing) throw InputError("f.parquet, row group " + std::to_string(g) + ": cannot be read (bad page)");
      std::vector<ArrowBinaryColumn> columns;
      for (int64_t k = 0; k < parts; ++k) {
        std::vector<std::string> values = group_values(g, kGroupSizes[static_cast<size_t>(g)]);
        if (k > 0)
          for (std::string& v : values) v.append("/").append(std::to_string(k));
        columns.emplace_back(binary_array(values), "z", "g");
      }
      return columns;
    };
    return std::make_unique<ArrowGroupImages>(groups, labels, reader, shuffle_buffer, keep_ahead, cache_bytes,
                                              parts);
  }
};

std::string expected(int64_t i) {
  int64_t g = 0;
  while (i >= kGroupSizes[static_cast<size_t>(g)]) i -= kGroupSizes[static_cast<size_t>(g++)];
  return std::to_string(g) + ":" + std::to_string(i);
}

TEST(ArrowGroupImages, EveryPlannedSampleFromOneReadOfEachGroupWhateverTheBound) {
  for (int64_t keep_ahead : {1, 4, 100}) {
    Groups groups;
    auto images = groups.make(8, keep_ahead);
    const auto order = images->epoch_order(3, 1, 0, 1);
    ASSERT_TRUE(order.has_value());
    EXPECT_EQ(*order, shard_epoch_order(kGroupSizes, {3, 1, 0, 1, 8})) << "row groups shuffled as shards are";
    images->reads_planned(*order, 0);
    // Two workers take alternate samples of the order, as the loader's take alternate batches.
    std::vector<std::string> got(order->size());
    auto work = [&](size_t first) {
      std::string scratch;
      for (size_t p = first; p < order->size(); p += 2) got[p] = std::string(images->bytes((*order)[p], scratch));
    };
    std::thread other(work, 1);
    work(0);
    other.join();
    for (size_t p = 0; p < order->size(); ++p) EXPECT_EQ(got[p], expected((*order)[p])) << "keep_ahead " << keep_ahead;
    for (const auto& r : groups.reads) EXPECT_EQ(r.load(), 1) << "keep_ahead " << keep_ahead;
    EXPECT_EQ(images->groups_read(), static_cast<int64_t>(kGroupSizes.size()));
  }
}

TEST(ArrowGroupImages, AResumedPlanReadsOnlyTheGroupsItStillNeeds) {
  Groups groups;
  auto images = groups.make(1, 0);
  std::vector<int64_t> order(25);
  std::iota(order.begin(), order.end(), 0);
  images->reads_planned(order, 8);  // groups 0 and 1 (samples 0..7) were taken before the state
  std::string scratch;
  for (size_t p = 8; p < order.size(); ++p) EXPECT_EQ(images->bytes(order[p], scratch), expected(order[p]));
  EXPECT_EQ(groups.reads[0].load() + groups.reads[1].load(), 0);
  EXPECT_EQ(images->name(9), "f.parquet, row group 2, row 1");
}

TEST(ArrowGroupImages, ASampleAskedAgainOrOutsideThePlanIsReadAgain) {
  Groups groups;
  auto images = groups.make(1, 0);
  images->reads_planned({0, 1}, 0);
  std::string scratch;
  EXPECT_EQ(images->bytes(0, scratch), "0:0");
  EXPECT_EQ(images->bytes(0, scratch), "0:0");  // a retry: the group is read again
  EXPECT_EQ(images->bytes(24, scratch), "4:5");  // not planned
  EXPECT_EQ(groups.reads[0].load(), 2);
}

TEST(ArrowGroupImages, LaterPlansReadTheGroupsKeptInTheCacheFromMemory) {
  std::vector<int64_t> order(25);
  std::iota(order.begin(), order.end(), 0);
  for (int64_t cache_bytes : {int64_t{1} << 20, int64_t{40}}) {  // all groups (~100 bytes); the last ~40 bytes
    Groups groups;
    auto images = groups.make(1, 0, -1, cache_bytes);
    std::string scratch;
    for (int epoch = 0; epoch < 3; ++epoch) {
      images->reads_planned(order, 0);
      for (int64_t i : order) EXPECT_EQ(images->bytes(i, scratch), expected(i));
    }
    const int reads = std::accumulate(groups.reads.begin(), groups.reads.end(), 0);
    if (cache_bytes > 100) EXPECT_EQ(reads, 5) << "each group read once, then from memory";
    else EXPECT_GT(reads, 5) << "a bound below the groups' bytes reads again";
  }
}

TEST(ArrowGroupImages, AReadersErrorReachesTheWorkerThatWaits) {
  Groups groups;
  auto images = groups.make(1, 0, 2);
  std::vector<int64_t> order(25);
  std::iota(order.begin(), order.end(), 0);
  images->reads_planned(order, 0);
  std::string scratch;
  EXPECT_EQ(images->bytes(0, scratch), "0:0");
  try {
    images->bytes(9, scratch);
    FAIL() << "a failed group gave bytes";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "f.parquet, row group 2: cannot be read (bad page)");
  }
}

TEST(ArrowGroupImages, CancellingWakesAWaitingWorker) {
  std::atomic<bool> release{false};
  std::vector<ArrowGroup> groups{{"slow", 1}};
  auto reader = [&](int64_t) {
    while (!release) std::this_thread::yield();
    return one(ArrowBinaryColumn(binary_array({"x"}), "z", "slow"));
  };
  ArrowGroupImages images(groups, {0}, reader, 1);
  images.reads_planned({0}, 0);
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    images.reads_cancelled(true);
  });
  std::string scratch;
  EXPECT_THROW(images.bytes(0, scratch), std::runtime_error);
  canceller.join();
  release = true;  // the read ends; the destructor joins the reader thread
}

TEST(ArrowGroupImages, SeveralImageColumnsAreOneReadOfEachGroup) {
  Groups groups;
  auto images = groups.make(4, 3, -1, 0, 2);  // keep_ahead 3 samples: 6 images
  ASSERT_EQ(images->parts(), 2);
  std::vector<int64_t> order(25);
  std::iota(order.begin(), order.end(), 0);
  images->reads_planned(order, 0);
  std::string scratch;
  for (const int64_t i : order) {
    EXPECT_EQ(images->bytes(i, scratch), expected(i));
    EXPECT_EQ(images->part_bytes(i, 1, scratch), expected(i) + "/1");
  }
  for (const auto& r : groups.reads) EXPECT_EQ(r.load(), 1) << "one reader call gives every image column";
  EXPECT_EQ(images->kept(), 0);
}

TEST(ArrowGroupImages, ADroppedReadLetsItsKeptPartsGo) {
  Groups groups;
  auto images = groups.make(1, 0, -1, 0, 2);
  const std::vector<int64_t> order{0, 1, 2, 3, 4};  // group 0
  images->reads_planned(order, 0);
  std::string scratch;
  EXPECT_EQ(images->bytes(0, scratch), "0:0");
  EXPECT_EQ(images->kept(), 9) << "the group's other images wait for their reads";
  images->read_dropped(0, 1);  // part 0 taken, its image bad: part 1 is not read for it
  images->read_dropped(1, 0);  // bytes() threw (a flagged sample): neither part is read
  EXPECT_EQ(images->kept(), 6);
  for (const int64_t i : {2, 3, 4}) {
    EXPECT_EQ(images->bytes(i, scratch), expected(i));
    EXPECT_EQ(images->part_bytes(i, 1, scratch), expected(i) + "/1");
  }
  EXPECT_EQ(images->kept(), 0) << "nothing left until the plan's end";
  EXPECT_EQ(images->part_bytes(0, 1, scratch), "0:0/1");  // asked again after all: read again
  EXPECT_EQ(groups.reads[0].load(), 2);
}

}  // namespace
}  // namespace fastloop
