// libFuzzer target for COCO annotation files (data/targets/coco_annotations.h) and the masks made from them
// (coco_mask.h): any bytes read or throw InputError; a file that reads is consistent (images sorted by id with
// unique ids, every annotation in one image's slice, boxes and labels one per annotation, keypoints K per
// annotation or refused with InputError) and each image's masks are made on a small canvas, or refused with
// InputError, without reading or writing out of bounds.
#include "fastloop/core/errors.h"
#include "fastloop/data/targets/coco_annotations.h"
#include "fuzz_files.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "coco_json fuzzer: %s\n", what);
    std::abort();
  }
}

// Whether the image's polygons are small enough to rasterize quickly: maskApi.c walks every edge at 5 points per
// pixel, so a fuzzed edge of 2^20 pixels costs seconds (a real one is as slow in pycocotools).
bool polygons_small(const fastloop::CocoAnnotations& coco, int64_t i) {
  std::vector<double> xy;
  for (int64_t k = 0; k < coco.annotation_count(i); ++k) {
    const auto& a = coco.annotation(i, k);
    if (a.segmentation != fastloop::CocoSegmentation::kPolygons) continue;
    for (int64_t p = 0; p < a.count; ++p) {
      coco.polygon(a, p, xy);
      if (xy.size() > 2000) return false;
      for (double v : xy)
        if (std::fabs(v) > 1000) return false;
    }
  }
  return true;
}

void masks_try(const fastloop::CocoAnnotations& coco, int64_t i) {
  const int64_t n = coco.annotation_count(i);
  if (n == 0 || n > 64 || !polygons_small(coco, i)) return;
  int64_t height = 7, width = 5;
  if (n > 0) {  // an RLE's own size, when it is small: the canvas its mask needs
    const auto& a = coco.annotation(i, 0);
    if (a.rle_height > 0 && a.rle_width > 0 && int64_t{a.rle_height} * a.rle_width <= 4096)
      height = a.rle_height, width = a.rle_width;
  }
  std::vector<uint8_t> masks(static_cast<size_t>(n * height * width) + 1, 0xAB);
  try {
    coco.masks(i, height, width, masks.data());
  } catch (const fastloop::InputError&) {
    return;
  }
  for (size_t j = 0; j + 1 < masks.size(); ++j) check(masks[j] <= 1, "a mask byte is neither 0 nor 1");
  check(masks.back() == 0xAB, "masks wrote past N * H * W bytes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fastloop::fuzz::ScratchDir dir;
  const std::string path = dir / "instances.json";
  fastloop::fuzz::write_file(path, data, size);
  std::shared_ptr<const fastloop::CocoAnnotations> coco;
  try {
    coco = fastloop::CocoAnnotations::read(path);
  } catch (const fastloop::InputError&) {
    return 0;
  }
  const std::vector<int64_t> ids = coco->ids();
  check(static_cast<int64_t>(ids.size()) == coco->size(), "ids() and size() disagree");
  for (size_t i = 1; i < ids.size(); ++i) check(ids[i - 1] < ids[i], "image ids not sorted and unique");
  std::vector<float> boxes;
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < coco->size(); ++i) {
    coco->boxes_xyxy(i, boxes);
    coco->labels(i, labels);
    check(boxes.size() == 4 * labels.size() && static_cast<int64_t>(labels.size()) == coco->annotation_count(i),
          "boxes, labels and annotations disagree");
    masks_try(*coco, i);
    std::vector<float> points;
    std::vector<int64_t> visibility;
    try {
      const int64_t per = coco->keypoints(i, points, &visibility);
      check(per >= 0 && static_cast<int64_t>(visibility.size()) == per * coco->annotation_count(i) &&
                points.size() == 2 * visibility.size(),
            "keypoints, visibility and annotations disagree");
    } catch (const fastloop::InputError&) {  // annotations of one image with different counts
    }
  }
  return 0;
}
