// Several views per sample (data/transforms/views.h): each image decoded once, each view through its own
// pipeline into a batch of its own size; view 0 is the single-view loader's batch, the same for any workers.
#include "fastloop/data/loader/loader.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/data/transforms/pipeline.h"
#include "fastloop/data/transforms/views.h"
#include "cat_dog_folder.h"
#include "temp_dir.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

using namespace fastloop;

namespace {

// View 0 crops at full scale, so a shared decode (the finest scale any view needs) is the one it makes alone.
const char* const kCentre = "CenterCrop(24), ToTensor(), Normalize(mean=(0.5, 0.5, 0.5), std=(0.25, 0.25, 0.25))";
const char* const kLocal = "RandomResizedCrop(16, scale=(0.2, 1.0)), RandomHorizontalFlip(), ToTensor()";

LoaderOptions views_options(int64_t workers, const std::vector<std::pair<std::string, int64_t>>& views) {
  LoaderOptions options;
  options.batch_size = 4;
  options.workers = workers;
  options.drop_last = false;
  options.sampler.seed = 11;
  for (const auto& [spec, size] : views) options.views.push_back({std::make_shared<const Pipeline>(spec), size, size});
  return options;
}

std::vector<Batch> epoch(const Dataset& dataset, const LoaderOptions& options, int64_t* decoded = nullptr) {
  Loader loader(dataset, options);
  loader.start_epoch(2);
  std::vector<Batch> out;
  while (auto batch = loader.next()) {
    for (at::Tensor& view : batch->views) view = view.clone();
    if (batch->images.defined()) batch->images = batch->images.clone();
    out.push_back(*batch);
  }
  if (decoded) *decoded = loader.images_decoded();
  return out;
}

}  // namespace

TEST(LoaderViews, EachViewHasItsSizeAndViewZeroIsTheSingleViewBatch) {
  const test::TempDir tmp;
  Dataset dataset = data_load("imagefolder:" + test::cat_dog_folder_write(tmp.sub("images"))).train;
  dataset.image_height = dataset.image_width = 24;
  const auto views = epoch(dataset, views_options(0, {{kCentre, 24}, {kLocal, 16}}));
  LoaderOptions single = views_options(0, {});
  single.augment.pipeline = std::make_shared<const Pipeline>(kCentre);
  const auto singles = epoch(dataset, single);
  ASSERT_EQ(views.size(), 3u);  // 10 images in batches of 4
  ASSERT_EQ(singles.size(), views.size());
  for (size_t k = 0; k < views.size(); ++k) {
    ASSERT_EQ(views[k].views.size(), 2u);
    EXPECT_FALSE(views[k].images.defined());
    const int64_t count = views[k].labels.size(0);
    EXPECT_EQ(views[k].views[0].sizes(), at::IntArrayRef({count, 3, 24, 24}));
    EXPECT_EQ(views[k].views[1].sizes(), at::IntArrayRef({count, 3, 16, 16}));
    EXPECT_TRUE(at::equal(views[k].views[0], singles[k].images)) << "batch " << k;
    EXPECT_TRUE(at::equal(views[k].labels, singles[k].labels)) << "batch " << k;
  }
}

TEST(LoaderViews, EachImageIsDecodedOnceAndWorkersMakeTheSameBatches) {
  const test::TempDir tmp;
  Dataset dataset = data_load("imagefolder:" + test::cat_dog_folder_write(tmp.sub("images"))).train;
  dataset.image_height = dataset.image_width = 24;
  int64_t decoded = 0;
  const auto alone = epoch(dataset, views_options(0, {{kCentre, 24}, {kLocal, 16}, {kLocal, 16}}), &decoded);
  EXPECT_EQ(decoded, 10);  // one decode per image, not per view
  const auto threaded = epoch(dataset, views_options(2, {{kCentre, 24}, {kLocal, 16}, {kLocal, 16}}), &decoded);
  EXPECT_EQ(decoded, 10);
  ASSERT_EQ(alone.size(), threaded.size());
  for (size_t k = 0; k < alone.size(); ++k)
    for (size_t v = 0; v < 3; ++v) EXPECT_TRUE(at::equal(alone[k].views[v], threaded[k].views[v])) << k << ", " << v;
  EXPECT_FALSE(at::equal(alone[0].views[1], alone[0].views[2]));  // one pipeline, independent draws
}

TEST(LoaderViews, ViewSeedsKeepViewZerosAndDifferFromEachOther) {
  EXPECT_EQ(view_seed(7, 0), 7u);
  EXPECT_NE(view_seed(7, 1), view_seed(7, 2));
  EXPECT_NE(view_seed(7, 1), view_seed(8, 1));
  EXPECT_LT(view_seed(7, 1), uint64_t{1} << 63);  // an int64 seed for a single-view loader
}

TEST(LoaderViews, InMemoryViewsAreSingleViewBatchesOfTheirViewSeeds) {
  Dataset dataset;
  dataset.images = at::arange(24 * 3 * 8 * 8, at::kLong).remainder(251).to(at::kByte).reshape({24, 3, 8, 8});
  dataset.labels = at::arange(24, at::kLong).remainder(4);
  dataset.num_classes = 4;
  const char* flip = "RandomHorizontalFlip(), ToTensor()";
  LoaderOptions options = views_options(1, {{flip, 0}, {flip, 0}});
  options.sampler.shuffle = false;  // the order of another seed's single-view loader is then the same
  const auto views = epoch(dataset, options);
  for (int64_t v = 0; v < 2; ++v) {
    LoaderOptions single = views_options(1, {});
    single.augment.pipeline = std::make_shared<const Pipeline>(flip);
    single.sampler.seed = view_seed(11, v);
    single.sampler.shuffle = false;
    const auto singles = epoch(dataset, single);
    ASSERT_EQ(singles.size(), views.size());
    for (size_t k = 0; k < views.size(); ++k) EXPECT_TRUE(at::equal(views[k].views[v], singles[k].images)) << k;
  }
}
