// The loader over data with targets (Dataset::targets): each sample's boxes and masks through the pipeline with
// its image (data/transforms/target_batch.h), batches as lists of samples with the images stacked when their
// sizes agree, the same batches for any number of workers, and a pipeline that cannot move boxes refused.
#include "fastloop/data/codecs/image_decode.h"
#include "fastloop/data/loader/loader.h"
#include "fastloop/data/transforms/pipeline.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

using namespace fastloop;

namespace {

// Golden images of several sizes and formats, read from tests/golden/images.
class GoldenImages final : public EncodedImages {
 public:
  explicit GoldenImages(std::vector<std::string> files) : files_(std::move(files)) {}
  int64_t size() const override { return static_cast<int64_t>(files_.size()); }
  int64_t label(int64_t) const override { return 0; }
  std::string name(int64_t i) const override {
    std::string path = FASTLOOP_TEST_DIR;  // appended: GCC 12 warns (-Warray-bounds) on a chain of + here
    path += "/golden/images/";
    path += files_[static_cast<size_t>(i)];
    return path;
  }
  std::string_view bytes(int64_t i, std::string& scratch) const override {
    std::ifstream in(name(i), std::ios::binary);
    scratch.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    return scratch;
  }

 private:
  std::vector<std::string> files_;
};

// Two boxes per sample: (1, 2, 11, 12) and one reaching past the bottom-right corner; a filled-rectangle
// instance mask under each, labels index + 1 and 7.
class TwoBoxes final : public TargetSource {
 public:
  void sample_targets(int64_t index, int64_t height, int64_t width, SampleTargets& t) const override {
    const double h = static_cast<double>(height), w = static_cast<double>(width);
    t.has_boxes = true;
    t.boxes = {1, 2, 11, 12, w - 5, h - 5, w + 3, h + 3};
    t.labels = {index + 1, 7};
    t.kept = {0, 1};
    t.instance_masks = true;
    for (int k = 0; k < 2; ++k) {
      ImageU8 mask;
      mask.reshape(height, width, 1);
      std::fill(mask.pixels.begin(), mask.pixels.end(), 0);
      const int64_t x0 = k == 0 ? 1 : width - 5, y0 = k == 0 ? 2 : height - 5;
      for (int64_t y = y0; y < std::min<int64_t>(y0 + 10, height); ++y)
        for (int64_t x = x0; x < std::min<int64_t>(x0 + 10, width); ++x) mask.row(y)[x] = 1;
      t.masks.push_back(std::move(mask));
    }
  }
};

Dataset target_data(const std::vector<std::string>& files) {
  Dataset d;
  d.encoded = std::make_shared<GoldenImages>(files);
  d.targets = std::make_shared<TwoBoxes>();
  d.num_classes = 1;
  d.classes = {"object"};
  return d;
}

std::vector<Batch> epoch(const Dataset& dataset, const std::string& spec, int64_t workers, int64_t batch_size = 2) {
  LoaderOptions options;
  options.batch_size = batch_size;
  options.workers = workers;
  options.drop_last = false;
  options.sampler.seed = 5;
  options.augment.pipeline = std::make_shared<const Pipeline>(spec);
  Loader loader(dataset, options);
  loader.start_epoch(1);
  std::vector<Batch> out;
  while (auto batch = loader.next()) out.push_back(std::move(*batch));
  return out;
}

const std::vector<std::string> kSameKind = {"rgb.jpg", "rgb.png", "large.jpg", "gray.png", "rgba.png"};

}  // namespace

TEST(TargetLoader, FlipAndResizeMoveBoxesAndMasksWithThePixels) {
  const Dataset data = target_data({"rgb.png"});
  const auto batches = epoch(data, "RandomHorizontalFlip(p=1), Resize((40, 48)), ToDtype(torch.float32, scale=True)", 0);
  ASSERT_EQ(batches.size(), 1u);
  const TargetSample& s = batches[0].samples.at(0);
  ASSERT_TRUE(batches[0].images.defined());
  EXPECT_EQ(batches[0].images.sizes(), (std::vector<int64_t>{1, 3, 40, 48}));
  EXPECT_EQ(s.image.scalar_type(), at::kFloat);
  // The image's own size: flip x -> W - x, then scale by 48 / W and 40 / H; no clamp (resize does not clamp).
  std::string scratch;
  ImageDecoder decoder;
  const RgbImage whole = decoder.decode(data.encoded->bytes(0, scratch), "rgb.png");
  const double w = static_cast<double>(whole.width), h = static_cast<double>(whole.height);
  const double sx = 48.0 / w, sy = 40.0 / h;
  const std::vector<double> want = {(w - 11) * sx, 2 * sy, (w - 1) * sx, 12 * sy, -3 * sx, (h - 5) * sy, 5 * sx, (h + 3) * sy};
  ASSERT_EQ(s.boxes.sizes(), (std::vector<int64_t>{2, 4}));
  for (int64_t i = 0; i < 8; ++i) EXPECT_NEAR(s.boxes.view({-1})[i].item<float>(), want[static_cast<size_t>(i)], 1e-4) << i;
  EXPECT_TRUE(at::equal(s.labels, at::tensor(std::vector<int64_t>{1, 7})));
  ASSERT_EQ(s.masks.sizes(), (std::vector<int64_t>{2, 40, 48}));
  // Each mask stays under its (clamped) box: nothing set outside it.
  for (int64_t k = 0; k < 2; ++k) {
    const at::Tensor ys = s.masks[k].nonzero();
    ASSERT_GT(ys.size(0), 0);
    EXPECT_GE(ys.select(1, 1).min().item<int64_t>(), static_cast<int64_t>(std::floor(std::max(0.0, want[k * 4]))));
    EXPECT_LE(ys.select(1, 1).max().item<int64_t>(), static_cast<int64_t>(std::ceil(want[k * 4 + 2])));
  }
}

TEST(TargetLoader, SanitizeDropsABoxWithItsLabelAndMask) {
  // rgb.jpg is 61 x 47: the crop's corner is (6, 4); the second box is clamped to zero width and dropped.
  const auto batches = epoch(target_data({"rgb.jpg"}), "CenterCrop((40, 50)), SanitizeBoundingBoxes(), ToTensor()", 0);
  const TargetSample& s = batches.at(0).samples.at(0);
  ASSERT_EQ(s.boxes.size(0), 1);
  EXPECT_TRUE(at::allclose(s.boxes, at::tensor(std::vector<float>{0, 0, 5, 8}).view({1, 4})));
  EXPECT_TRUE(at::equal(s.kept, at::tensor(std::vector<int64_t>{0})));
  EXPECT_TRUE(at::equal(s.labels, at::tensor(std::vector<int64_t>{1})));
  EXPECT_EQ(s.masks.size(0), 1);
}

TEST(TargetLoader, ImagesOfTheirOwnSizesComeAsAListAndAnyWorkersGiveTheSameBatches) {
  const Dataset data = target_data(kSameKind);
  const std::string spec = "RandomResizedCrop(24, scale=(0.3, 1.0)), RandomHorizontalFlip(), ToTensor()";
  const auto one = epoch(data, spec, 0);
  for (int64_t workers : {1, 2}) {
    const auto many = epoch(data, spec, workers);
    ASSERT_EQ(many.size(), one.size());
    for (size_t b = 0; b < one.size(); ++b) {
      EXPECT_TRUE(at::equal(many[b].images, one[b].images));
      for (size_t i = 0; i < one[b].samples.size(); ++i) {
        EXPECT_EQ(many[b].samples[i].index, one[b].samples[i].index);
        EXPECT_TRUE(at::equal(many[b].samples[i].boxes, one[b].samples[i].boxes));
        EXPECT_TRUE(at::equal(many[b].samples[i].masks, one[b].samples[i].masks));
      }
    }
  }
  const auto own_sizes = epoch(data, "RandomHorizontalFlip(), ToImage()", 1, 5);
  ASSERT_EQ(own_sizes.size(), 1u);
  EXPECT_FALSE(own_sizes[0].images.defined());  // the golden images differ in size
  for (const TargetSample& s : own_sizes[0].samples) {
    EXPECT_EQ(s.image.scalar_type(), at::kByte);
    EXPECT_EQ(s.masks.size(1), s.image.size(1));
    EXPECT_EQ(s.masks.size(2), s.image.size(2));
  }
}

TEST(TargetLoader, APipelineThatCannotMoveBoxesIsRefusedWhenTheLoaderIsMade) {
  const Dataset data = target_data({"rgb.jpg"});
  LoaderOptions options;
  options.augment.pipeline = std::make_shared<const Pipeline>("RandomHorizontalFlip(), RandAugment(), ToTensor()");
  try {
    Loader loader(data, options);
    FAIL() << "RandAugment was accepted for boxes";
  } catch (const TransformTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("RandAugment"), std::string::npos) << e.what();
  }
}
