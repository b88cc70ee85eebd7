// WebDataset shards: grouping a tar's members into samples, shard patterns, the epoch order (shard
// shuffle, rank split, shuffle buffer; deterministic, every sample once per epoch across ranks), the
// ShardImages split over mapped files, the `shards:` spec forms, and Python's webdataset and tarfile
// agreeing with all of it.
#include "fastloop/data/sources/shard_order.h"
#include "fastloop/data/sources/shards.h"

#include "data_files.h"
#include "shard_files.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace fastloop {
namespace {

using namespace test_data;
using namespace test_shards;

std::string shard_bytes(const TempDir& dir, const std::vector<std::pair<std::string, std::string>>& files) {
  TarWriter w(dir / "s.tar");
  for (const auto& [name, bytes] : files) w.add(name, bytes);
  w.close();
  return read_all(dir / "s.tar");
}

TEST(ShardIndex, GroupsMembersByKeyAsWebdatasetDoes) {
  TempDir dir;
  const std::string a = shard_bytes(dir, {{"x/a.jpg", "A"}, {"x/a.cls", " 3\n"}, {"x/a.json", "{}"}, {"README", "r"},
                                          {"b.PNG", "B"}, {"b.cls", "0"}, {"d.c.png", "D"}, {"d.c.cls", "1"},
                                          {"c.cls", "12"}, {"c.jpeg", "C"}});
  const auto samples = shard_index(a, "s.tar");
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].key, "x/a");
  EXPECT_EQ(samples[0].image, "x/a.jpg");
  EXPECT_EQ(samples[0].label, 3);
  EXPECT_EQ(a.substr(static_cast<size_t>(samples[0].offset), static_cast<size_t>(samples[0].size)), "A");
  EXPECT_EQ(samples[1].key, "b");
  EXPECT_EQ(samples[1].image, "b.PNG");  // extensions compare lower-cased, as webdataset's
  // "d.c.png": key "d", extension "c.png", which is no image (webdataset names it "c.png" too): skipped.
  EXPECT_EQ(samples[2].label, 12);
  EXPECT_EQ(samples[2].image, "c.jpeg");
}

TEST(ShardIndex, APrefixListsTheSamplesCompleteInItAndGrowsToTheWholeIndex) {
  TempDir dir;
  write_shard(dir / "s.tar", fake_samples(0, 9));
  const std::string whole = read_all(dir / "s.tar");
  const auto want = shard_index(whole, "s.tar");
  ASSERT_EQ(want.size(), 9u);
  size_t listed = 0;
  for (size_t cut = 0; cut <= whole.size(); cut += 7) {  // every member and header cut at many places
    const auto part = shard_index_prefix(std::string_view(whole).substr(0, cut), "s.tar");
    ASSERT_GE(part.size(), listed) << "at byte " << cut;
    listed = part.size();
    for (size_t k = 0; k < part.size(); ++k) {
      EXPECT_EQ(part[k].key, want[k].key);
      EXPECT_EQ(part[k].offset, want[k].offset);
      EXPECT_EQ(part[k].label, want[k].label);
      EXPECT_LE(part[k].offset + part[k].size, static_cast<int64_t>(cut));
    }
    // A sample is listed once its .cls is followed by the next key's header, or the archive's end block.
    if (cut < whole.size() - 512) {
      EXPECT_LT(part.size(), want.size()) << "at byte " << cut;
    }
  }
  EXPECT_EQ(shard_index_prefix(whole, "s.tar").size(), want.size());
  EXPECT_TRUE(shard_index_prefix(whole.substr(0, 100), "s.tar").empty());
  EXPECT_CONTAINS(input_error_of([&] { shard_index_prefix(std::string(512, 'z'), "s.tar"); }), "s.tar: tar header at byte 0");
}

TEST(ShardIndex, BadSamplesAreInputErrorsNamingTheShardAndKey) {
  TempDir dir;
  auto error_of = [&](const std::vector<std::pair<std::string, std::string>>& files) {
    const std::string a = shard_bytes(dir, files);
    return input_error_of([&] { shard_index(a, "/d/train-000003.tar"); });
  };
  EXPECT_CONTAINS(error_of({{"k.jpg", "A"}}), "/d/train-000003.tar: sample 'k' has an image but no k.cls");
  EXPECT_CONTAINS(error_of({{"k.cls", "1"}}), "sample 'k' has a .cls but no image");
  EXPECT_CONTAINS(error_of({{"k.jpg", "A"}, {"k.png", "B"}, {"k.cls", "1"}}), "has two images");
  EXPECT_CONTAINS(error_of({{"k.jpg", "A"}, {"k.cls", "cat"}}), "/d/train-000003.tar:k.cls: the class index must be a whole number");
  EXPECT_CONTAINS(error_of({{"k.jpg", "A"}, {"k.cls", "-1"}}), "found '-1'");
  EXPECT_CONTAINS(error_of({{"k.jpg", "A"}, {"k.cls", "99999999"}}), "in [0, 16777216)");
  EXPECT_CONTAINS(error_of({{"notes.txt", "hello"}}), "/d/train-000003.tar: no samples");
  EXPECT_CONTAINS(input_error_of([] { shard_index(std::string(700, 'z'), "/d/junk.tar"); }), "/d/junk.tar: tar header at byte 0");
}

TEST(ShardPattern, ExpandsRangesWithTheirPaddingAndLists) {
  EXPECT_EQ(shard_pattern_expand("s-{000008..000011}.tar"),
            (std::vector<std::string>{"s-000008.tar", "s-000009.tar", "s-000010.tar", "s-000011.tar"}));
  EXPECT_EQ(shard_pattern_expand("s{8..10}"), (std::vector<std::string>{"s8", "s9", "s10"}));
  EXPECT_EQ(shard_pattern_expand("{a,b}-{0..1}.tar"), (std::vector<std::string>{"a-0.tar", "a-1.tar", "b-0.tar", "b-1.tar"}));
  EXPECT_EQ(shard_pattern_expand("plain.tar"), (std::vector<std::string>{"plain.tar"}));
  EXPECT_CONTAINS(input_error_of([] { shard_pattern_expand("s-{0..9.tar"); }), "shard pattern 's-{0..9.tar': '{' without '}'");
  EXPECT_CONTAINS(input_error_of([] { shard_pattern_expand("s-{a..9}.tar"); }), "not a range of whole numbers");
  EXPECT_CONTAINS(input_error_of([] { shard_pattern_expand("s-{0..99999999}.tar"); }), "names more than 1000000 files");
  // The limit holds for the product of groups too, each group within it alone.
  EXPECT_CONTAINS(input_error_of([] { shard_pattern_expand("{0..99}-{0..99}.tar", 1000); }),
                  "shard pattern '{0..99}-{0..99}.tar': names more than 1000 files");
  EXPECT_EQ(shard_pattern_expand("{0..9}-{0..99}.tar", 1000).size(), 1000u);
}

// Shard sizes deliberately uneven: 7 shards, 60 samples.
const std::vector<int64_t> kShardSizes = {13, 5, 9, 1, 12, 8, 12};

TEST(ShardOrder, EveryRankSplitVisitsEverySampleOncePerEpochWithEqualShares) {
  for (int64_t world : {1, 2, 3, 4, 6, 12}) {  // divisors of 60, including more ranks than shards
    std::vector<int64_t> all;
    for (int64_t rank = 0; rank < world; ++rank) {
      const auto mine = shard_epoch_order(kShardSizes, {7, 2, rank, world, 16});
      EXPECT_EQ(static_cast<int64_t>(mine.size()), 60 / world) << "rank " << rank << " of " << world;
      all.insert(all.end(), mine.begin(), mine.end());
    }
    std::sort(all.begin(), all.end());
    std::vector<int64_t> expected(60);
    std::iota(expected.begin(), expected.end(), int64_t{0});
    EXPECT_EQ(all, expected) << "world " << world;
  }
}

TEST(ShardOrder, PadsByWrappingWhenTheRanksCannotShareEvenly) {
  std::multiset<int64_t> seen;
  for (int64_t rank = 0; rank < 7; ++rank) {
    const auto mine = shard_epoch_order(kShardSizes, {1, 0, rank, 7, 4});
    EXPECT_EQ(mine.size(), 9u);  // ceil(60 / 7)
    seen.insert(mine.begin(), mine.end());
  }
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 60u);  // all of them, 3 twice
  EXPECT_EQ(seen.size(), 63u);
}

TEST(ShardOrder, IsDeterministicAndChangesWithEpochSeedAndRank) {
  const auto a = shard_epoch_order(kShardSizes, {5, 3, 0, 2, 8});
  EXPECT_EQ(a, shard_epoch_order(kShardSizes, {5, 3, 0, 2, 8}));
  EXPECT_NE(a, shard_epoch_order(kShardSizes, {5, 4, 0, 2, 8}));
  EXPECT_NE(a, shard_epoch_order(kShardSizes, {6, 3, 0, 2, 8}));
  EXPECT_NE(a, shard_epoch_order(kShardSizes, {5, 3, 1, 2, 8}));
}

TEST(ShardOrder, ReadsEachShardFrontToBackAndTheBufferOnlyMixesNearbySamples) {
  std::vector<int64_t> first = {0};
  for (int64_t s : kShardSizes) first.push_back(first.back() + s);
  const auto shard_of = [&](int64_t i) { return std::upper_bound(first.begin(), first.end(), i) - first.begin() - 1; };
  const auto plain = shard_epoch_order(kShardSizes, {3, 1, 0, 1, 1});  // buffer 1: no mixing
  std::set<int64_t> done;
  for (size_t k = 0; k < plain.size(); ++k) {
    if (k > 0 && shard_of(plain[k]) == shard_of(plain[k - 1])) {
      EXPECT_EQ(plain[k], plain[k - 1] + 1);  // within a shard, file order
    } else {
      EXPECT_EQ(done.count(shard_of(plain[k])), 0u) << "a shard is read in one go";
      done.insert(shard_of(plain[k]));
    }
  }
  EXPECT_EQ(done.size(), kShardSizes.size());
  EXPECT_FALSE(std::is_sorted(plain.begin(), plain.end())) << "the shards are shuffled";
  const auto mixed = shard_epoch_order(kShardSizes, {3, 1, 0, 1, 8});
  EXPECT_NE(mixed, plain);
  for (size_t k = 0; k < mixed.size(); ++k) {  // a sample leaves the 8-slot buffer at most 8 places early
    const size_t at = static_cast<size_t>(std::find(plain.begin(), plain.end(), mixed[k]) - plain.begin());
    EXPECT_LE(at, k + 8) << "sample " << mixed[k];
  }
}

TEST(ShardImages, MapsShardsAndGivesEachSamplesBytesLabelAndName) {
  TempDir dir;
  const auto s0 = fake_samples(0, 5), s1 = fake_samples(5, 4);
  write_shard(dir / "train-000000.tar", s0);
  write_shard(dir / "train-000001.tar", s1);
  ShardImages images({dir / "train-000000.tar", dir / "train-000001.tar"}, /*shuffled=*/true, 4);
  ASSERT_EQ(images.size(), 9);
  std::string scratch;
  for (int64_t i = 0; i < 9; ++i) {
    const FakeSample& want = i < 5 ? s0[static_cast<size_t>(i)] : s1[static_cast<size_t>(i - 5)];
    EXPECT_EQ(images.bytes(i, scratch), want.bytes);
    EXPECT_EQ(images.label(i), want.label);
    EXPECT_EQ(images.name(i), dir / (i < 5 ? "train-000000.tar:" : "train-000001.tar:") + want.key + "." + want.ext);
  }
  EXPECT_EQ(images.num_classes(), 5);
  EXPECT_EQ(images.epoch_order(1, 2, 0, 1), shard_epoch_order({5, 4}, {1, 2, 0, 1, 4}));
  EXPECT_FALSE(ShardImages({dir / "train-000000.tar"}, /*shuffled=*/false, 4).epoch_order(1, 2, 0, 1).has_value());
}

TEST(ShardsLoad, AcceptsADirectoryTrainAndValPatternsAndATrainOnlyPattern) {
  TempDir dir;
  for (int s = 0; s < 3; ++s) write_shard(dir / ("train-00000" + std::to_string(s) + ".tar"), fake_samples(s * 4, 4, 7));
  write_shard(dir / "val-000000.tar", fake_samples(8, 3, 9));  // labels 8, 0, 1
  const ShardSplits by_dir = shards_load(dir.path(), 64);
  EXPECT_EQ(by_dir.train->size(), 12);
  ASSERT_TRUE(by_dir.val);
  EXPECT_EQ(by_dir.val->size(), 3);
  EXPECT_EQ(by_dir.num_classes, 9);  // over both splits
  const ShardSplits by_pattern = shards_load(dir / "train-{000000..000002}.tar::" + dir / "val-{000000..000000}.tar", 64);
  EXPECT_EQ(by_pattern.train->size(), 12);
  ASSERT_TRUE(by_pattern.val);
  EXPECT_EQ(by_pattern.val->size(), 3);
  EXPECT_CONTAINS(input_error_of([&] { shards_load(dir / "train-0000{00,01}.tar::" + dir / "val-{000000..000001}.tar", 64); }),
                  "val-000001.tar' (from '" + dir / "val-{000000..000001}.tar') is not a file");
  const ShardSplits train_only = shards_load(dir / "train-{000001..000002}.tar", 64);
  EXPECT_EQ(train_only.train->size(), 8);
  EXPECT_FALSE(train_only.val);
}

TEST(ShardsLoad, BadDirectoriesAndMalformedShardsAreInputErrorsWithThePath) {
  TempDir dir;
  EXPECT_CONTAINS(input_error_of([&] { shards_load(dir.path(), 64); }), "has no train-*.tar shards");
  write_shard(dir / "train-000000.tar", fake_samples(0, 3));
  std::string bytes = read_all(dir / "train-000000.tar");
  bytes[1024 + 10] ^= 0x55;  // inside the second header (the first sample's image is 100 bytes)
  write_all(dir / "train-000000.tar", bytes);
  EXPECT_CONTAINS(input_error_of([&] { shards_load(dir.path(), 64); }), dir / "train-000000.tar: tar header at byte 1024: checksum mismatch");
  write_all(dir / "train-000000.tar", read_all(dir / "train-000000.tar").substr(0, 1100));
  EXPECT_CONTAINS(input_error_of([&] { shards_load(dir.path(), 64); }), "truncated");
}

TEST(ShardsLoad, WebdatasetReadsTheSameSamplesLabelsAndBytes) {
  FASTLOOP_SKIP_WITHOUT_VENV();
  TempDir dir;
  write_shard(dir / "train-000000.tar", fake_samples(0, 6));
  write_shard(dir / "train-000001.tar", fake_samples(6, 5));
  const auto lines = peer_run("webdataset " + dir / "train-000000.tar " + dir / "train-000001.tar");
  const ShardSplits splits = shards_load(dir.path(), 1);
  ASSERT_EQ(static_cast<int64_t>(lines.size()), splits.train->size());
  std::string scratch;
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["cls"], splits.train->label(static_cast<int64_t>(i)));
    EXPECT_EQ(lines[i]["hex"], hex(splits.train->bytes(static_cast<int64_t>(i), scratch)));
  }
}

TEST(ShardsLoad, ShardsWrittenByPythonTarfileReadBackIdentically) {
  FASTLOOP_SKIP_WITHOUT_VENV();
  TempDir dir;
  const auto samples = fake_samples(0, 7);
  std::filesystem::create_directories(dir / "src/sub");
  for (const FakeSample& s : samples) {
    write_all(dir / ("src/sub/" + s.key + "." + s.ext), s.bytes);
    write_all(dir / ("src/sub/" + s.key + ".cls"), std::to_string(s.label));
  }
  for (const std::string format : {"pax", "gnu", "ustar"}) {
    peer_run("write " + dir / ("train-" + format + ".tar") + " " + format + " " + dir / "src");
    ShardImages images({dir / ("train-" + format + ".tar")}, true, 16);
    ASSERT_EQ(images.size(), 7) << format;
    std::string scratch;
    for (int64_t i = 0; i < 7; ++i) {
      EXPECT_EQ(images.bytes(i, scratch), samples[static_cast<size_t>(i)].bytes);
      EXPECT_EQ(images.label(i), samples[static_cast<size_t>(i)].label);
    }
  }
}

} // namespace
} // namespace fastloop
