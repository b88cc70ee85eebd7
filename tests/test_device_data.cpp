// Device-resident mode (LoaderOptions::on_device): the same batches as the threaded loader for every
// seed, epoch, dtype and layout; every index once per epoch per rank; determinism; bad input; CUDA.
#include "fastloop/data/loader/device_data.h"
#include "fastloop/data/loader/loader.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>

using namespace fastloop;

namespace {
Dataset small_dataset(int64_t n, int64_t c, int64_t h, int64_t w) {
  Dataset d;
  d.images = torch::arange(n * c * h * w, torch::kLong).mul(7).remainder(256).to(torch::kUInt8).reshape({n, c, h, w});
  d.labels = torch::arange(n, torch::kLong);  // label = index: labels name the samples
  d.num_classes = n;
  for (int64_t k = 0; k < c; ++k) d.mean.push_back(0.4f + 0.05f * static_cast<float>(k));
  d.stddev.assign(static_cast<size_t>(c), 0.3f);
  return d;
}

LoaderOptions options_for(bool on_device, uint64_t seed) {
  LoaderOptions options;
  options.batch_size = 6;
  options.workers = 2;
  options.drop_last = false;
  options.augment = augment_crop_flip(3);
  options.sampler.seed = seed;
  options.on_device = on_device;
  return options;
}

std::vector<Batch> epoch_batches(const Dataset& d, const LoaderOptions& options, int64_t epoch, int64_t first = 0) {
  Loader loader(d, options);
  loader.start_epoch(epoch, first);
  std::vector<Batch> out;
  while (auto b = loader.next()) out.push_back(*b);
  return out;
}

void expect_same_batches(const std::vector<Batch>& got, const std::vector<Batch>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].index, want[i].index) << what;
    EXPECT_TRUE(torch::equal(got[i].labels.cpu(), want[i].labels)) << what << ", batch " << i;
    EXPECT_TRUE(torch::equal(got[i].images.cpu(), want[i].images)) << what << ", batch " << i;
  }
}
}  // namespace

TEST(DeviceData, SameBatchesAsTheThreadedLoaderForEverySeedEpochDtypeAndLayout) {
  auto d = small_dataset(40, 3, 7, 6);
  for (uint64_t seed : {0u, 9u}) {
    for (int64_t epoch : {0, 5}) {
      for (auto dtype : {at::kFloat, at::kHalf, at::kBFloat16}) {
        for (bool channels_last : {false, true}) {
          auto threaded = options_for(false, seed), resident = options_for(true, seed);
          threaded.dtype = resident.dtype = dtype;
          threaded.channels_last = resident.channels_last = channels_last;
          auto got = epoch_batches(d, resident, epoch);
          if (channels_last) {
            EXPECT_TRUE(got[0].images.is_contiguous(at::MemoryFormat::ChannelsLast));
          }
          EXPECT_EQ(got[0].images.scalar_type(), dtype);
          expect_same_batches(got, epoch_batches(d, threaded, epoch),
                              "seed " + std::to_string(seed) + " epoch " + std::to_string(epoch));
        }
      }
    }
  }
}

TEST(DeviceData, SameBatchesWithoutAugmentationAndWithFlipOnly) {
  auto d = small_dataset(13, 1, 4, 5);
  AugmentOptions flip_only;
  flip_only.flip = true;
  for (const AugmentOptions& augment : {AugmentOptions{}, flip_only}) {
    auto threaded = options_for(false, 3), resident = options_for(true, 3);
    threaded.augment = resident.augment = augment;
    expect_same_batches(epoch_batches(d, resident, 1), epoch_batches(d, threaded, 1), "flip " + std::to_string(augment.flip));
  }
}

TEST(DeviceData, EveryIndexOncePerEpochPerRankAndInTheUnion) {
  auto d = small_dataset(29, 1, 3, 3);
  std::set<int64_t> unions;
  for (int64_t rank = 0; rank < 3; ++rank) {
    auto options = options_for(true, 1);
    options.sampler.rank = rank;
    options.sampler.world_size = 3;
    std::vector<int64_t> seen;
    for (const auto& b : epoch_batches(d, options, 4))
      for (int64_t i = 0; i < b.labels.size(0); ++i) seen.push_back(b.labels[i].item<int64_t>());
    EXPECT_EQ(seen.size(), 10u);  // ceil(29 / 3), padded by wrapping
    EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 10u);
    unions.insert(seen.begin(), seen.end());
  }
  EXPECT_EQ(unions.size(), 29u);
}

TEST(DeviceData, DeterministicFromSeedAndEpochOnly) {
  auto d = small_dataset(30, 3, 5, 5);
  auto a = epoch_batches(d, options_for(true, 2), 1), b = epoch_batches(d, options_for(true, 2), 1);
  expect_same_batches(a, b, "same seed and epoch");
  auto other_epoch = epoch_batches(d, options_for(true, 2), 2), other_seed = epoch_batches(d, options_for(true, 3), 1);
  EXPECT_FALSE(torch::equal(a[0].images, other_epoch[0].images));
  EXPECT_FALSE(torch::equal(a[0].images, other_seed[0].images));
}

TEST(DeviceData, ResumesMidEpochAndDropsTheLastPartialBatch) {
  auto d = small_dataset(40, 1, 4, 4);
  auto options = options_for(true, 4);
  auto all = epoch_batches(d, options, 2);
  auto resumed = epoch_batches(d, options, 2, 3);
  ASSERT_EQ(resumed.size(), all.size() - 3);
  EXPECT_TRUE(torch::equal(resumed[0].images, all[3].images));
  options.drop_last = true;
  auto dropped = epoch_batches(d, options, 2);
  EXPECT_EQ(dropped.size(), 6u);  // 40 / 6
  for (const auto& b : dropped) EXPECT_EQ(b.labels.size(0), 6);
}

TEST(DeviceData, BadLabelIsReportedWithItsSample) {
  auto d = small_dataset(12, 1, 2, 2);
  d.labels[7] = 99;
  try {
    Loader loader(d, options_for(true, 0));
    FAIL() << "expected an error naming sample 7";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("sample 7"), std::string::npos) << e.what();
  }
}

TEST(DeviceData, SameBatchesOnTheGpuAsTheThreadedLoader_CUDA) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible";
  auto d = small_dataset(50, 3, 8, 8);
  auto threaded = options_for(false, 6), resident = options_for(true, 6);
  threaded.channels_last = resident.channels_last = true;
  resident.device = torch::Device(torch::kCUDA, 0);
  auto got = epoch_batches(d, resident, 1);
  EXPECT_TRUE(got[0].images.is_cuda());
  expect_same_batches(got, epoch_batches(d, threaded, 1), "cuda");
}
