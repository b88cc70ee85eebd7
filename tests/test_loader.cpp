// Loader and sampler: coverage of every index, determinism across worker counts, the fused
// augmentation against a plain reference, and failures that reach the caller.
#include "fastloop/data/transforms/augment.h"
#include "fastloop/data/loader/loader.h"
#include "fastloop/data/loader/sampler.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>

using namespace fastloop;

namespace {
Dataset tiny_dataset(int64_t n, int64_t c, int64_t h, int64_t w) {
  Dataset d;
  d.images = torch::arange(n * c * h * w, torch::kLong).remainder(251).to(torch::kUInt8).reshape({n, c, h, w});
  d.labels = torch::arange(n, torch::kLong).remainder(10);
  d.num_classes = 10;
  d.mean.assign(static_cast<size_t>(c), 0.5f);
  d.stddev.assign(static_cast<size_t>(c), 0.25f);
  return d;
}

std::vector<at::Tensor> epoch_images(const Dataset& d, int64_t workers, bool augment) {
  LoaderOptions options;
  options.batch_size = 7;
  options.workers = workers;
  options.prefetch = 3;
  options.drop_last = false;
  options.augment = augment ? augment_crop_flip(2) : AugmentOptions{};
  options.sampler.seed = 42;
  Loader loader(d, options);
  loader.start_epoch(3);
  std::vector<at::Tensor> out;
  while (auto b = loader.next()) out.push_back(b->images);
  return out;
}
}  // namespace

TEST(Sampler, EveryIndexOncePerEpochAndShuffledDifferentlyPerEpoch) {
  SamplerOptions options;
  options.seed = 1;
  auto e0 = sampler_epoch_indices(1000, 0, options), e1 = sampler_epoch_indices(1000, 1, options);
  EXPECT_EQ(std::set<int64_t>(e0.begin(), e0.end()).size(), 1000u);
  EXPECT_EQ(e0.size(), 1000u);
  EXPECT_NE(e0, e1);
  EXPECT_EQ(e0, sampler_epoch_indices(1000, 0, options));
}

TEST(Sampler, RanksGetEqualCountsAndTogetherCoverEveryIndex) {
  std::set<int64_t> all;
  for (int64_t rank = 0; rank < 3; ++rank) {
    SamplerOptions options;
    options.rank = rank;
    options.world_size = 3;
    auto mine = sampler_epoch_indices(100, 0, options);
    EXPECT_EQ(mine.size(), 34u);  // ceil(100 / 3), padded by wrapping
    all.insert(mine.begin(), mine.end());
  }
  EXPECT_EQ(all.size(), 100u);
}

TEST(Loader, SameBatchesForZeroOneAndFourWorkers) {
  auto d = tiny_dataset(50, 3, 6, 5);
  auto ref = epoch_images(d, 0, true);
  ASSERT_EQ(ref.size(), 8u);  // 50 / 7 rounded up
  for (int64_t workers : {1, 4}) {
    auto got = epoch_images(d, workers, true);
    ASSERT_EQ(got.size(), ref.size());
    for (size_t i = 0; i < ref.size(); ++i) EXPECT_TRUE(torch::equal(got[i], ref[i])) << workers << " workers, batch " << i;
  }
}

TEST(Loader, AugmentationMatchesPadCropFlipNormalizeReference) {
  auto d = tiny_dataset(9, 2, 5, 6);
  LoaderOptions options;
  options.batch_size = 9;
  options.workers = 0;
  options.drop_last = false;
  options.augment = augment_crop_flip(3);
  options.sampler.shuffle = false;
  options.sampler.seed = 7;
  Loader loader(d, options);
  loader.start_epoch(0);
  auto batch = *loader.next();
  int flips = 0;
  for (int64_t i = 0; i < 9; ++i) {
    // Find the (crop, flip) whose plain-tensor reference equals the sample: one must.
    auto padded = torch::constant_pad_nd(d.images[i].to(torch::kFloat), {3, 3, 3, 3}, 0.0);
    bool matched = false;
    for (int64_t oy = 0; oy <= 6 && !matched; ++oy)
      for (int64_t ox = 0; ox <= 6 && !matched; ++ox)
        for (bool flip : {false, true}) {
          auto crop = padded.slice(1, oy, oy + 5).slice(2, ox, ox + 6);
          if (flip) crop = crop.flip({2});
          auto ref = (crop / 255.0 - 0.5) / 0.25;
          if (torch::allclose(batch.images[i], ref, 1e-5, 1e-5)) {
            matched = true;
            flips += flip;
            break;
          }
        }
    EXPECT_TRUE(matched) << "sample " << i << " is no crop/flip of the original";
    EXPECT_EQ(batch.labels[i].item<int64_t>(), i % 10);
  }
  EXPECT_GT(flips, 0);
  EXPECT_LT(flips, 9);
}

TEST(Loader, WithoutAugmentationOutputIsNormalizedInput) {
  auto d = tiny_dataset(4, 1, 3, 3);
  auto batches = epoch_images(d, 2, false);
  LoaderOptions options;
  auto expected = (d.images.to(torch::kFloat) / 255.0 - 0.5) / 0.25;
  auto indices = sampler_epoch_indices(4, 3, SamplerOptions{true, 42, 0, 1});
  for (int64_t k = 0; k < 4; ++k) EXPECT_TRUE(torch::allclose(batches[0][k], expected[indices[static_cast<size_t>(k)]]));
}

TEST(Loader, ResumesMidEpochWithTheSameBatches) {
  auto d = tiny_dataset(50, 1, 4, 4);
  auto all = epoch_images(d, 2, true);
  LoaderOptions options;
  options.batch_size = 7;
  options.workers = 2;
  options.drop_last = false;
  options.augment = augment_crop_flip(2);
  options.sampler.seed = 42;
  Loader loader(d, options);
  loader.start_epoch(3, 5);
  auto b = loader.next();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->index, 5);
  EXPECT_TRUE(torch::equal(b->images, all[5]));
}

TEST(Loader, WorkerErrorReachesCallerWithSampleIndex) {
  auto d = tiny_dataset(40, 1, 4, 4);
  d.labels[13] = 99;  // a bad sample: label outside the 10 classes
  for (int64_t workers : {0, 3}) {
    LoaderOptions options;
    options.batch_size = 5;
    options.workers = workers;
    options.sampler.shuffle = false;
    Loader loader(d, options);
    loader.start_epoch(0);
    try {
      while (loader.next()) {
      }
      FAIL() << "expected the error of sample 13";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("sample 13: label 99"), std::string::npos) << e.what();
    }
  }
}

TEST(Loader, StopsCleanlyMidEpoch) {
  auto d = tiny_dataset(500, 3, 8, 8);
  LoaderOptions options;
  options.batch_size = 4;
  options.workers = 4;
  options.prefetch = 8;
  for (int trial = 0; trial < 20; ++trial) {
    Loader loader(d, options);
    loader.start_epoch(trial);
    for (int k = 0; k < trial % 5; ++k) ASSERT_TRUE(loader.next());
  }  // destructor joins every worker; a hang here fails the test by timeout
  SUCCEED();
}

namespace {
std::vector<at::Tensor> epoch_images_as(const Dataset& d, int64_t workers, at::ScalarType dtype, bool channels_last) {
  LoaderOptions options;
  options.batch_size = 7;
  options.workers = workers;
  options.drop_last = false;
  options.augment = augment_crop_flip(2);
  options.sampler.seed = 42;
  options.dtype = dtype;
  options.channels_last = channels_last;
  Loader loader(d, options);
  loader.start_epoch(3);
  std::vector<at::Tensor> out;
  while (auto b = loader.next()) out.push_back(b->images);
  return out;
}

std::vector<int64_t> epoch_labels(const Dataset& d, const SamplerOptions& sampler, int64_t workers) {
  LoaderOptions options;
  options.batch_size = 4;
  options.workers = workers;
  options.drop_last = false;
  options.sampler = sampler;
  Loader loader(d, options);
  loader.start_epoch(2);
  std::vector<int64_t> out;
  while (auto b = loader.next()) {
    auto labels = b->labels.contiguous();
    out.insert(out.end(), labels.data_ptr<int64_t>(), labels.data_ptr<int64_t>() + labels.numel());
  }
  return out;
}
}  // namespace

TEST(Loader, HalfBFloat16AndChannelsLastEqualFloat32NchwConverted) {
  auto d = tiny_dataset(30, 3, 6, 5);
  auto ref = epoch_images_as(d, 0, at::kFloat, false);
  for (auto dtype : {at::kFloat, at::kHalf, at::kBFloat16}) {
    for (bool channels_last : {false, true}) {
      auto got = epoch_images_as(d, 2, dtype, channels_last);
      ASSERT_EQ(got.size(), ref.size());
      for (size_t i = 0; i < ref.size(); ++i) {
        EXPECT_EQ(got[i].scalar_type(), dtype);
        EXPECT_EQ(got[i].sizes(), ref[i].sizes());
        EXPECT_TRUE(channels_last ? got[i].is_contiguous(at::MemoryFormat::ChannelsLast) : got[i].is_contiguous());
        EXPECT_TRUE(torch::equal(got[i], ref[i].to(dtype))) << dtype << " channels_last " << channels_last << " batch " << i;
      }
    }
  }
}

TEST(Loader, EveryIndexOncePerEpochPerRankAndInTheUnion) {
  auto d = tiny_dataset(23, 1, 2, 2);
  d.labels = torch::arange(23, torch::kLong);  // label = index, so labels name the samples
  d.num_classes = 23;
  SamplerOptions one;
  one.seed = 5;
  auto all = epoch_labels(d, one, 3);
  EXPECT_EQ(all.size(), 23u);
  EXPECT_EQ(std::set<int64_t>(all.begin(), all.end()).size(), 23u);
  std::set<int64_t> unions;
  for (int64_t rank = 0; rank < 4; ++rank) {
    SamplerOptions sharded = one;
    sharded.rank = rank;
    sharded.world_size = 4;
    auto mine = epoch_labels(d, sharded, rank % 2 ? 2 : 0);
    EXPECT_EQ(mine.size(), 6u) << "rank " << rank;  // ceil(23 / 4), padded by wrapping
    EXPECT_EQ(std::set<int64_t>(mine.begin(), mine.end()).size(), 6u) << "rank " << rank;
    unions.insert(mine.begin(), mine.end());
  }
  EXPECT_EQ(unions.size(), 23u);
}

TEST(Loader, DropLastDropsOnlyThePartialBatch) {
  auto d = tiny_dataset(30, 1, 2, 2);
  LoaderOptions options;
  options.batch_size = 8;
  options.workers = 2;
  Loader loader(d, options);
  EXPECT_EQ(loader.batches_per_epoch(), 3);
  loader.start_epoch(0);
  int64_t batches = 0;
  while (auto b = loader.next()) {
    EXPECT_EQ(b->labels.size(0), 8) << "batch " << batches;
    ++batches;
  }
  EXPECT_EQ(batches, 3);
  EXPECT_FALSE(loader.next());  // stays at the end
}

TEST(Loader, StopJoinsWorkersWaitingOnAFullWindowAndRestarts) {
  auto d = tiny_dataset(400, 3, 8, 8);
  LoaderOptions options;
  options.batch_size = 2;
  options.workers = 4;
  options.prefetch = 1;
  Loader loader(d, options);
  for (int round = 0; round < 10; ++round) {
    loader.start_epoch(round);  // stops the previous epoch mid-way: workers blocked on the window must exit
    ASSERT_TRUE(loader.next());
    loader.stop();
    loader.stop();  // idempotent
  }
  loader.start_epoch(0);
  int64_t batches = 0;
  while (loader.next()) ++batches;
  EXPECT_EQ(batches, 200);
}

TEST(Loader, ReusesABatchBufferOnlyAfterTheConsumerLetsGo) {
  const auto d = tiny_dataset(300, 3, 8, 8);
  LoaderOptions options;
  options.batch_size = 10;
  options.workers = 2;
  options.prefetch = 2;
  options.augment = augment_crop_flip(2);
  const std::vector<at::Tensor> reference = epoch_images(d, 0, true);  // batch 7, kept: nothing reused
  options.batch_size = 7;
  options.prefetch = 3;
  options.drop_last = false;
  options.sampler.seed = 42;
  Loader loader(d, options);
  loader.start_epoch(3);
  const at::Tensor held = loader.next()->images;  // the consumer keeps the first batch
  const at::Tensor held_copy = held.clone();
  std::set<const void*> buffers;
  size_t k = 1;
  while (auto b = loader.next()) {  // every later batch is let go at once
    EXPECT_NE(b->images.data_ptr(), held.data_ptr()) << "batch " << k << " was written over a batch still held";
    ASSERT_LT(k, reference.size());
    EXPECT_TRUE(torch::equal(b->images, reference[k])) << "batch " << k;
    buffers.insert(b->images.data_ptr());
    ++k;
  }
  EXPECT_EQ(k, reference.size());
  EXPECT_TRUE(torch::equal(held, held_copy));
  EXPECT_LE(buffers.size(), static_cast<size_t>(options.prefetch + options.workers + 1)) << "buffers were not reused";
}

TEST(Loader, BatchAssembleRejectsWrongShapeOrDtype) {
  auto d = tiny_dataset(4, 3, 4, 4);
  std::vector<int64_t> idx = {0, 1};
  auto labels = torch::empty({2}, torch::kLong);
  auto wrong_dtype = torch::empty({2, 3, 4, 4}, torch::kDouble);
  EXPECT_THROW(batch_assemble(d, idx.data(), 2, {}, 0, 0, wrong_dtype, labels), c10::Error);
  auto wrong_shape = torch::empty({2, 3, 4, 5});
  EXPECT_THROW(batch_assemble(d, idx.data(), 2, {}, 0, 0, wrong_shape, labels), c10::Error);
  auto strided = torch::empty({2, 3, 8, 4}).slice(2, 0, 8, 2);
  EXPECT_THROW(batch_assemble(d, idx.data(), 2, {}, 0, 0, strided, labels), c10::Error);
}

TEST(Loader, PinnedRingDeliversTheSameBatchesOnTheGpu_CUDA) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible";
  auto d = tiny_dataset(300, 3, 8, 8);
  LoaderOptions options;
  options.batch_size = 16;
  options.workers = 3;
  options.prefetch = 2;  // a small ring: slots are reused many times per epoch
  options.drop_last = false;
  options.augment = augment_crop_flip(2);
  options.channels_last = true;
  options.dtype = at::kHalf;
  Loader cpu(d, options);
  options.device = torch::Device(torch::kCUDA, 0);
  options.pin_memory = true;
  Loader gpu(d, options);
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    cpu.start_epoch(epoch);
    gpu.start_epoch(epoch);
    std::vector<at::Tensor> held;  // keep device batches alive while later copies reuse their slots
    while (auto want = cpu.next()) {
      auto got = gpu.next();
      ASSERT_TRUE(got);
      EXPECT_TRUE(got->images.is_cuda());
      EXPECT_TRUE(got->images.is_contiguous(at::MemoryFormat::ChannelsLast));
      auto sum = got->images.to(at::kFloat).sum() * 0.0;  // queue work on the compute stream meanwhile
      held.push_back(got->images + sum.to(at::kHalf));
      EXPECT_TRUE(torch::equal(got->labels.cpu(), want->labels));
      EXPECT_TRUE(torch::equal(held.back().cpu(), want->images));
    }
    EXPECT_FALSE(gpu.next());
  }
}
