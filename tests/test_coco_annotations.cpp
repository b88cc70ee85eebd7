// CocoAnnotations (data/targets/coco_annotations.h) and CocoImages: a small instances file read into images sorted
// by id with their annotations in the file's order, torchvision's boxes and labels, masks from polygons and from
// both RLE forms, and each malformed input an InputError naming the file and the element. The masks' byte-for-
// byte parity with pycocotools is tests/python/test_coco.py's.
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/coco_images.h"
#include "fastloop/data/targets/coco_annotations.h"
#include "fastloop/data/targets/coco_mask.h"
#include "temp_dir.h"

#include <gtest/gtest.h>

#include <fstream>

namespace fastloop {
namespace {

std::string file_write(const test::TempDir& dir, const std::string& json) {
  const std::string path = dir / "instances.json";
  std::ofstream(path) << json;
  return path;
}

// The InputError message of reading `json`, "" when it reads.
std::string read_error(const std::string& json) {
  test::TempDir dir;
  const std::string path = file_write(dir, json);
  try {
    CocoAnnotations::read(path);
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;  // names the file first
    return message.substr(path.size() + 2);
  }
  return "";
}

const char* const kSmall = R"({"info": {"year": 2017}, "annotations": [
  {"id": 7, "image_id": 30, "category_id": 2, "bbox": [1.5, 2, 3, 4.25], "area": 12.5, "iscrowd": 0,
   "segmentation": [[1, 1, 6, 1, 6, 5, 1, 5]]},
  {"id": 3, "image_id": 10, "category_id": 1, "bbox": [0, 0, 2, 2], "iscrowd": 1,
   "segmentation": {"counts": [2, 3, 7], "size": [4, 3]}},
  {"id": 9, "image_id": 30, "category_id": 1, "bbox": [0, 0, 1, 1],
   "segmentation": {"size": [4, 3], "counts": "1305"}}],
 "images": [{"id": 30, "file_name": "c.jpg", "height": 6, "width": 8}, {"id": 10, "file_name": "a.png", "height": 4,
   "width": 3}, {"id": 20, "file_name": "sub/b.jpg"}],
 "categories": [{"id": 1, "name": "cat"}, {"id": 2, "name": "dog"}]})";

TEST(CocoAnnotations, ReadsImagesSortedByIdWithTheirAnnotationsInFileOrder) {
  test::TempDir dir;
  const auto coco = CocoAnnotations::read(file_write(dir, kSmall));
  ASSERT_EQ(coco->size(), 3);
  EXPECT_EQ(coco->ids(), (std::vector<int64_t>{10, 20, 30}));
  EXPECT_EQ(coco->image(1).file_name, "sub/b.jpg");
  EXPECT_EQ(coco->image(1).height, 0);  // absent
  EXPECT_EQ(coco->image(2).width, 8);
  EXPECT_EQ(coco->annotation_count(0), 1);
  EXPECT_EQ(coco->annotation_count(1), 0);  // an image without annotations is a sample too
  ASSERT_EQ(coco->annotation_count(2), 2);
  EXPECT_EQ(coco->annotation(2, 0).id, 7);
  EXPECT_EQ(coco->annotation(2, 1).id, 9);
  EXPECT_EQ(coco->annotation(2, 0).area, 12.5);
  EXPECT_EQ(coco->annotation(0, 0).iscrowd, 1);
  ASSERT_EQ(coco->categories().size(), 2u);
  EXPECT_EQ(coco->categories()[1].second, "dog");
}

TEST(CocoAnnotations, GivesTorchvisionsBoxesAndLabels) {
  test::TempDir dir;
  const auto coco = CocoAnnotations::read(file_write(dir, kSmall));
  std::vector<float> boxes;
  coco->boxes_xyxy(2, boxes);
  EXPECT_EQ(boxes, (std::vector<float>{1.5f, 2.f, 4.5f, 6.25f, 0.f, 0.f, 1.f, 1.f}));
  std::vector<int64_t> labels;
  coco->labels(2, labels);
  EXPECT_EQ(labels, (std::vector<int64_t>{2, 1}));
  coco->labels(1, labels);
  EXPECT_TRUE(labels.empty());
}

TEST(CocoAnnotations, MakesMasksFromPolygonsAndBothRleForms) {
  test::TempDir dir;
  const auto coco = CocoAnnotations::read(file_write(dir, kSmall));
  std::vector<uint8_t> masks(4 * 3);
  coco->masks(0, 4, 3, masks.data());
  // counts [2, 3, 7] down the columns of 4 rows: pixels 2, 3 of column 0 and pixel 0 of column 1
  EXPECT_EQ(masks, (std::vector<uint8_t>{0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0}));
  std::vector<uint8_t> two(2 * 6 * 8, 7);
  EXPECT_THROW(coco->masks(2, 6, 8, two.data()), InputError);  // annotation 9's RLE is 4 x 3, not 6 x 8
}

TEST(CocoAnnotations, RasterizesAPolygonAsPycocotools) {
  // pycocotools: mask.decode(mask.merge(mask.frPyObjects([[1, 1, 6, 1, 6, 5, 1, 5]], 6, 8))) covers rows 1..4 and
  // columns 1..5 (the right and bottom edges at 6 and 5 are outside, as frPoly rounds them)
  std::vector<double> xy{1, 1, 6, 1, 6, 5, 1, 5};
  std::vector<uint8_t> mask(6 * 8, 0);
  std::vector<uint32_t> scratch;
  coco_polygon_fill(xy.data(), 4, 6, 8, mask.data(), scratch);
  for (int y = 0; y < 6; ++y)
    for (int x = 0; x < 8; ++x) EXPECT_EQ(mask[y * 8 + x], (y >= 1 && y <= 4 && x >= 1 && x <= 5) ? 1 : 0) << y << "," << x;
}

TEST(CocoAnnotations, DecodesCompressedRleCountsAsRleFrString) {
  std::vector<uint32_t> counts;
  EXPECT_EQ(coco_rle_from_string("1305", counts), "");  // from the fourth run on, each adds the one two before
  EXPECT_EQ(counts, (std::vector<uint32_t>{1, 3, 0, 8}));
  counts.clear();
  EXPECT_NE(coco_rle_from_string("1p", counts).find("'p'"), std::string::npos);
  counts.clear();
  EXPECT_NE(coco_rle_from_string("1R", counts).find("ends inside"), std::string::npos);
  counts.clear();
  EXPECT_NE(coco_rle_from_string("@", counts).find("outside"), std::string::npos);  // -16
}

TEST(CocoAnnotations, NamesTheElementOfEachMalformedInput) {
  const std::string image = R"({"id": 1, "file_name": "a.jpg"})";
  const auto with = [&](const std::string& annotation) {
    return R"({"images": [)" + image + R"(], "categories": [{"id": 1}], "annotations": [)" + annotation + "]}";
  };
  const std::string ok = R"("id": 5, "image_id": 1, "category_id": 1)";
  EXPECT_EQ(read_error(with("{" + ok + R"(, "bbox": [1, 2, 3, 4]})")), "");
  EXPECT_NE(read_error("not json").find("the file must be a JSON object"), std::string::npos);
  EXPECT_NE(read_error("").find("the file must be a JSON object"), std::string::npos);
  EXPECT_NE(read_error(R"({"images": [], "annotations": [}]})").find("not valid JSON near byte"), std::string::npos);
  EXPECT_NE(read_error(R"({"images": [], "annotations": [{"id": 1,}]})").find("not valid JSON in annotations[0] near byte"),
            std::string::npos);
  EXPECT_NE(read_error(R"({"images": [)").find("not valid JSON"), std::string::npos);
  EXPECT_NE(read_error("[1, 2]").find("the file must be a JSON object"), std::string::npos);
  EXPECT_NE(read_error(R"({"annotations": []})").find("has no \"images\" list"), std::string::npos);
  EXPECT_NE(read_error(R"({"images": []})").find("has no \"annotations\" list"), std::string::npos);
  EXPECT_NE(read_error(R"({"images": {}, "annotations": []})").find("images must be a list"), std::string::npos);
  EXPECT_NE(read_error(R"({"images": [{"id": "1", "file_name": "a"}], "annotations": []})").find("images[0].id must be an integer"),
            std::string::npos);
  EXPECT_NE(read_error(R"({"images": [{"id": 1}], "annotations": []})").find("images[0] (id 1) has no \"file_name\""),
            std::string::npos);
  EXPECT_NE(read_error(R"({"images": [{"id": 1, "file_name": "a"}, {"id": 1, "file_name": "b"}], "annotations": []})")
                .find("lists the id 1 twice"),
            std::string::npos);
  EXPECT_NE(read_error(with("{" + ok + R"(, "bbox": [1, 2, 3]})")).find("annotations[0].bbox must be 4 numbers"), std::string::npos);
  EXPECT_NE(read_error(with("{" + ok + R"(, "bbox": [1, 2, 3, "4"]})")).find("annotations[0].bbox must be 4 numbers"),
            std::string::npos);
  EXPECT_NE(read_error(with("{" + ok + R"(, "bbox": [1, 2, -3, 4]})")).find("annotations[0] (id 5).bbox has a negative width"),
            std::string::npos);
  EXPECT_NE(read_error(with(R"({"id": 5, "image_id": 1, "bbox": [1, 2, 3, 4]})")).find("annotations[0] (id 5) has no \"category_id\""),
            std::string::npos);
  EXPECT_NE(read_error(with(R"({"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4]})")).find("annotations[0] has no \"id\""),
            std::string::npos);
  EXPECT_NE(read_error(with(R"({"id": 5, "image_id": 2, "category_id": 1, "bbox": [1, 2, 3, 4]})"))
                .find("annotations[0] (id 5) has image_id 2, which no entry of \"images\" has"),
            std::string::npos);
  EXPECT_NE(read_error(with(R"({"id": 5, "image_id": 1, "category_id": 4, "bbox": [1, 2, 3, 4]})"))
                .find("annotations[0] (id 5) has category_id 4, which no entry of \"categories\" has"),
            std::string::npos);
  const std::string box = R"(, "bbox": [1, 2, 3, 4], )";
  EXPECT_NE(read_error(with("{" + ok + box + R"("segmentation": [[1, 2, 3, 4, 5]]})"))
                .find("annotations[0].segmentation[0] has 5 numbers"),
            std::string::npos);
  EXPECT_NE(read_error(with("{" + ok + box + R"("segmentation": [[1, 2, 3, 4, 5, "6"]]})"))
                .find("annotations[0].segmentation[0][5] must be a number"),
            std::string::npos);
  EXPECT_NE(read_error(with("{" + ok + box + R"("segmentation": [[1, 2, 3, 4, 5, 1e9]]})")).find("beyond +-2^20 pixels"),
            std::string::npos);
  EXPECT_NE(read_error(with("{" + ok + box + R"("segmentation": 3})")).find("annotations[0].segmentation must be a list"),
            std::string::npos);
  EXPECT_NE(read_error(with("{" + ok + box + R"("segmentation": {"counts": [1, 2], "size": [2, 2]}})"))
                .find("annotations[0] (id 5).segmentation counts add up to 3 pixels, not size 2 x 2 = 4"),
            std::string::npos);
  EXPECT_NE(read_error(with("{" + ok + box + R"("segmentation": {"counts": [1, -2], "size": [2, 2]}})"))
                .find("annotations[0].segmentation.counts[1] must be a run"),
            std::string::npos);
  EXPECT_NE(read_error(with("{" + ok + box + R"("segmentation": {"counts": "PPPPPP0", "size": [2, 2]}})"))
                .find("longer than 6 characters"),
            std::string::npos);
  EXPECT_NE(read_error(with("{" + ok + box + R"("segmentation": {"counts": [4], "size": [2]}})"))
                .find("annotations[0].segmentation.size must be [height, width]"),
            std::string::npos);
  EXPECT_NE(read_error(with("{" + ok + box + R"("segmentation": {"counts": [4]}})")).find("must have \"counts\" and \"size\""),
            std::string::npos);
  test::TempDir dir;
  EXPECT_THROW(CocoAnnotations::read(dir / "missing.json"), InputError);
}

TEST(CocoAnnotations, RefusesMasksPycocotoolsCannotMake) {
  test::TempDir dir;
  const auto coco = CocoAnnotations::read(file_write(dir, R"({"images": [{"id": 1, "file_name": "a.jpg"}], "annotations": [
    {"id": 4, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "segmentation": [[1, 2, 3, 4]]},
    {"id": 5, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]}]})"));
  std::vector<uint8_t> masks(2 * 4 * 4);
  try {
    coco->masks(0, 4, 4, masks.data());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("annotation id 4 (image id 1): a segmentation whose first polygon has fewer than 3"),
              std::string::npos) << e.what();
  }
}

TEST(CocoImages, NamesImagesUnderRootAndNamesAMissingOneWhenRead) {
  test::TempDir dir;
  const auto coco = CocoAnnotations::read(file_write(dir, kSmall));
  std::ofstream(dir / "a.png") << "png bytes";
  const CocoImages images(dir.path(), coco);
  ASSERT_EQ(images.size(), 3);
  EXPECT_EQ(images.name(0), dir / "a.png");
  EXPECT_EQ(images.name(1), dir / "sub/b.jpg");
  EXPECT_EQ(images.label(2), 0);
  std::string scratch;
  EXPECT_EQ(images.bytes(0, scratch), "png bytes");
  try {
    images.bytes(2, scratch);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(dir / "c.jpg"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace fastloop
