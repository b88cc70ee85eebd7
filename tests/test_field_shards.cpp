// Samples of fields and mixtures: the field specs, FieldShards' grouping and checks, MixtureImages' weighted order
// (deterministic, each source's own order, proportions) and its plan handed to each source; a bad sample's read
// dropped by the workers (what a source kept of it goes).
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/field_shards.h"
#include "fastloop/data/sources/field_values.h"
#include "fastloop/data/sources/image_parts.h"
#include "fastloop/data/sources/mixture_images.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/data/sources/tar.h"
#include "fastloop/data/transforms/image_augment.h"
#include "fastloop/data/transforms/views.h"

#include "data_files.h"
#include "golden_support.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <set>

namespace fastloop {
namespace {

using test_data::TempDir;

std::string write_tar(const TempDir& dir, const std::string& name,
                      const std::vector<std::pair<std::string, std::string>>& members) {
  TarWriter w(dir / name);
  for (const auto& [member, bytes] : members) w.add(member, bytes);
  w.close();
  return dir / name;
}

std::vector<FieldSpec> specs(std::initializer_list<const char*> texts) {
  std::vector<FieldSpec> out;
  for (const char* t : texts) out.push_back(field_spec_parse(t));
  return out;
}

TEST(FieldSpec, NamesKindsAndKeysAsWebdatasetDecodesThem) {
  const FieldSpec image = field_spec_parse("JPG;png;.webp");
  EXPECT_EQ(image.extensions, (std::vector<std::string>{"jpg", "png", "webp"}));
  EXPECT_EQ(image.kind, FieldKind::kImage);
  EXPECT_EQ(field_spec_parse("txt").kind, FieldKind::kText);
  EXPECT_EQ(field_spec_parse("cls").kind, FieldKind::kInt);
  EXPECT_EQ(field_spec_parse("seg.npy").kind, FieldKind::kBytes);
  EXPECT_EQ(field_spec_parse("seg.png").kind, FieldKind::kImage);  // by the last part, as webdataset looks
  EXPECT_EQ(field_spec_parse("meta.json:caption").kind, FieldKind::kJson);
  const FieldSpec key = field_spec_parse("json:caption");
  EXPECT_EQ(key.kind, FieldKind::kJson);
  EXPECT_EQ(key.json_key, "caption");
  EXPECT_THROW(field_spec_parse("txt:caption"), InputError);
  EXPECT_THROW(field_spec_parse("jpg;txt"), InputError);
  EXPECT_THROW(field_spec_parse("jpg;;png"), InputError);
}

TEST(FieldValues, ChecksUtf8JsonAndWholeNumbers) {
  EXPECT_TRUE(field_utf8_valid("caf\xc3\xa9"));
  EXPECT_FALSE(field_utf8_valid("caf\xe9"));
  EXPECT_EQ(field_json_check(R"({"caption": "a"})", "caption"), "");
  EXPECT_NE(field_json_check(R"({"caption": "a")"), "");
  EXPECT_EQ(field_json_check(R"({"x": 1})", "caption"), "no key 'caption'");
  EXPECT_EQ(field_json_value(R"({"caption": "a \"b\"", "t": [1, 2]})", "t"), "[1,2]");
  EXPECT_EQ(field_int_parse(" 12\n"), 12);
  EXPECT_EQ(field_int_parse("-3"), -3);
  EXPECT_FALSE(field_int_parse("two"));
  EXPECT_FALSE(field_int_parse(""));
}

TEST(FieldShards, GroupsMembersByKeyAndPicksTheFirstExtensionPresent) {
  TempDir dir;
  const std::string path = write_tar(dir, "s.tar", {{"a.png", "PA"}, {"a.txt", "ta"}, {"a.jpg", "JA"},
                                                    {"__meta__.json", "{}"}, {"b.png", "PB"}, {"b.txt", "tb"},
                                                    {"b.png", "PB2"}, {"b.txt", "tb2"}, {"c.jpg", "JC"}});
  const FieldShards shards({path}, specs({"jpg;png", "txt"}), {false, 1, false});
  ASSERT_EQ(shards.size(), 4);  // b's repeated extension starts another sample, as group_by_keys does
  EXPECT_EQ(shards.key(0), "a");
  EXPECT_EQ(*shards.field(0, 0), "JA");  // jpg before png, whatever the member order
  EXPECT_EQ(*shards.field(1, 0), "PB");
  EXPECT_EQ(*shards.field(2, 1), "tb2");
  EXPECT_EQ(shards.label(3), 3);  // its own index: the consumer reads the fields by it
  std::string scratch;
  EXPECT_EQ(shards.bytes(0, scratch), "JA");
  try {
    (void)shards.bytes(3, scratch);
    FAIL() << "c has no .txt";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.tar:c: the sample has no .txt member"), std::string::npos) << e.what();
  }
}

TEST(FieldShards, EachImageFieldIsAPartOfTheSample) {
  TempDir dir;
  const std::string path = write_tar(dir, "s.tar", {{"a.jpg", "JA"}, {"a.seg.png", "SA"}, {"a.txt", "ta"},
                                                    {"b.jpg", "JB"}, {"b.txt", "tb"}});
  const FieldShards shards({path}, specs({"seg.png", "txt", "jpg"}), {false, 1, false});
  ASSERT_EQ(shards.parts(), 2);
  std::string scratch;
  EXPECT_EQ(shards.part_bytes(0, 0, scratch), "SA");  // part 0: the first image field, as bytes() gives it
  EXPECT_EQ(shards.part_bytes(0, 1, scratch), "JA");
  EXPECT_THROW((void)shards.part_bytes(1, 0, scratch), InputError);  // b has no .seg.png: named by the checks
  EXPECT_EQ(shards.part_bytes(1, 1, scratch), "JB");  // the other parts are not checked again
  const auto pairs = std::make_shared<FieldShards>(std::vector<std::string>{path}, specs({"jpg", "seg.png"}),
                                                   FieldShardOptions{false, 1, false});
  const auto single = std::make_shared<FieldShards>(std::vector<std::string>{path}, specs({"jpg", "txt"}),
                                                    FieldShardOptions{false, 1, false});
  const MixtureImages mixture({pairs, pairs}, {1.0, 1.0});
  EXPECT_EQ(mixture.parts(), 2);
  EXPECT_EQ(mixture.part_bytes(2, 1, scratch), "SA");  // the second source's first sample
  EXPECT_THROW(MixtureImages({pairs, single}, {1.0, 1.0}), InputError);  // 2 images per sample beside 1
  // splits of the same samples, one per image (Arrow image columns), zipped
  const auto segs = std::make_shared<FieldShards>(std::vector<std::string>{path}, specs({"seg.png;jpg"}),
                                                  FieldShardOptions{false, 1, false});
  const ImageParts zipped({single, segs});
  EXPECT_EQ(zipped.parts(), 2);
  EXPECT_EQ(zipped.part_bytes(0, 1, scratch), "SA");
  EXPECT_EQ(zipped.part_bytes(1, 1, scratch), "JB");
  EXPECT_EQ(zipped.bytes(1, scratch), "JB");                 // split 0's, as part 0
  EXPECT_THROW(ImageParts({single, pairs}), InputError);      // a split of two images per sample
}

// n samples, each its own label; an order of its own (reversed) when `ordered`.
class Counted : public EncodedImages {
 public:
  Counted(int64_t n, bool ordered) : n_(n), ordered_(ordered) {}
  int64_t size() const override { return n_; }
  int64_t label(int64_t i) const override { return i; }
  std::string name(int64_t i) const override { return std::to_string(i); }
  std::string_view bytes(int64_t, std::string&) const override { return "x"; }
  std::optional<std::vector<int64_t>> epoch_order(uint64_t, int64_t epoch, int64_t rank,
                                                  int64_t world_size) const override {
    if (!ordered_) return std::nullopt;
    std::vector<int64_t> out;
    for (int64_t i = n_ - 1 - rank; static_cast<int64_t>(out.size()) < (n_ + world_size - 1) / world_size;
         i -= world_size)
      out.push_back(((i % n_) + n_ + epoch) % n_);
    return out;
  }
  void reads_planned(const std::vector<int64_t>& indices, size_t from) const override {
    planned = std::vector<int64_t>(indices.begin() + static_cast<int64_t>(from), indices.end());
  }
  mutable std::vector<int64_t> planned;

 private:
  int64_t n_;
  bool ordered_;
};

TEST(MixtureImages, DrawsEachSourceByWeightInItsOwnOrder) {
  auto a = std::make_shared<Counted>(300, true);
  auto b = std::make_shared<Counted>(100, false);
  const MixtureImages mixture({a, b}, {1.0, 3.0});
  ASSERT_EQ(mixture.size(), 400);
  const auto order = *mixture.epoch_order(7, 0, 0, 1);
  ASSERT_EQ(order.size(), 400u);
  EXPECT_EQ(order, *mixture.epoch_order(7, 0, 0, 1));
  EXPECT_NE(order, *mixture.epoch_order(7, 1, 0, 1));
  std::vector<int64_t> from_a;
  int64_t from_b = 0;
  for (const int64_t i : order) (i < 300 ? from_a.push_back(i) : void(++from_b));
  EXPECT_NEAR(static_cast<double>(from_b) / 400, 0.75, 4 * std::sqrt(0.75 * 0.25 / 400));
  const auto own = *a->epoch_order(7, 0, 0, 1);
  for (size_t k = 0; k < from_a.size(); ++k) EXPECT_EQ(from_a[k], own[k]);  // a's order, as it would read alone
  // b, drawn ~300 times from 100 samples, runs through ~3 orders of its own: each sample ~3 times
  EXPECT_EQ(std::set<int64_t>(order.begin(), order.end()).size(), from_a.size() + 100);
  // the ranks: as many samples each
  EXPECT_EQ(mixture.epoch_order(7, 0, 1, 3)->size(), 134u);
  mixture.reads_planned(order, 10);
  EXPECT_EQ(a->planned.size() + b->planned.size(), 390u);
  EXPECT_THROW(MixtureImages({a, b}, {1.0}), InputError);
  EXPECT_THROW(MixtureImages({a, b}, {1.0, 0.0}), InputError);
}

std::string golden_bytes(const std::string& name) {
  std::ifstream in(test::kImageGoldenDir + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Four samples of two images each, part `bad_part` of sample 1 not an image; records the reads dropped.
class TwoImages : public EncodedImages {
 public:
  explicit TwoImages(int64_t bad_part) : bad_part_(bad_part) {}
  int64_t size() const override { return 4; }
  int64_t label(int64_t i) const override { return i; }
  std::string name(int64_t i) const override { return std::to_string(i); }
  std::string_view bytes(int64_t i, std::string& scratch) const override { return part_bytes(i, 0, scratch); }
  int64_t parts() const override { return 2; }
  std::string_view part_bytes(int64_t i, int64_t part, std::string&) const override {
    return i == 1 && part == bad_part_ ? bad_ : good_;
  }
  void read_dropped(int64_t i, int64_t parts_read) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    dropped.emplace_back(i, parts_read);
  }
  mutable std::vector<std::pair<int64_t, int64_t>> dropped;

 private:
  int64_t bad_part_;
  std::string good_ = golden_bytes("gray.jpg"), bad_ = golden_bytes("not_an_image.jpg");
  mutable std::mutex mutex_;
};

TEST(FieldShards, ASkippedSampleIsDroppedAfterThePartsItsWorkerTook) {
  for (const int64_t bad_part : {0, 1}) {
    const auto images = std::make_shared<TwoImages>(bad_part);
    DataOptions options;
    options.image.size = 16;
    options.skip_bad_images = true;
    const Dataset data = encoded_load(images, {}, options).train;
    const int64_t indices[] = {0, 1, 2};
    at::Tensor a = at::empty({3, 3, 16, 16}), b = at::empty({3, 3, 16, 16}), labels = at::empty({3}, at::kLong);
    const AssembleCounts counts = encoded_views_assemble(data, indices, 3, AugmentOptions{},
                                                         {ViewTarget{nullptr, a}, ViewTarget{nullptr, b}}, 1, 0, labels);
    EXPECT_EQ(counts.skipped, 1);
    EXPECT_EQ(labels[1].item<int64_t>(), 2) << "replaced by the next sample";
    const std::vector<std::pair<int64_t, int64_t>> want{{1, bad_part + 1}};  // the parts read up to the bad one
    EXPECT_EQ(images->dropped, want) << "bad part " << bad_part;
  }
}

}  // namespace
}  // namespace fastloop
