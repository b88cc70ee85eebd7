// A COCO instances annotation file (torchvision.datasets.CocoDetection's annFile), read once with simdjson into
// compact arrays: the images sorted by id (torchvision's `sorted(coco.imgs.keys())`, images without annotations
// included), each with the slice of its annotations in the file's order (pycocotools' imgToAnns), and the
// targets of one image as torchvision's wrap_dataset_for_transforms_v2 makes them (boxes XYXY, labels, masks).
// Nothing of the JSON document is kept once read. No torch types here: the fuzz target links it alone.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fastloop {

struct CocoImageInfo {
  int64_t id = 0;
  std::string file_name;
  int64_t height = 0;  // pixels, as the file says (0 when absent); masks use the decoded image's size
  int64_t width = 0;   // pixels
};

enum class CocoSegmentation : uint8_t {
  kNone,         // no "segmentation" field
  kPolygons,     // a list of [x0, y0, x1, y1, ...]
  kRleCounts,    // {"counts": [runs...], "size": [h, w]}: uncompressed RLE
  kRleString,    // {"counts": "...", "size": [h, w]}: compressed RLE (crowd annotations)
};

/// One annotation as the file gives it. Its segmentation lives in the arrays of CocoAnnotations.
struct CocoAnnotation {
  int64_t id = 0;
  double bbox[4] = {0, 0, 0, 0};  // x, y, width, height: pixels
  int64_t category_id = 0;
  double area = 0;                // pixels, as the file says
  int64_t iscrowd = 0;
  CocoSegmentation segmentation = CocoSegmentation::kNone;
  int32_t rle_height = 0, rle_width = 0;  // RLE "size"
  int64_t first = 0;  // polygons: first in polygons_; RLE: first run in counts_ (string: first character in text_)
  int64_t count = 0;  // polygons: how many; RLE: runs (string: characters)
  int64_t keypoints_first = 0;  // first number of its "keypoints" triplets in CocoAnnotations' keypoint values
  int64_t keypoint_count = 0;   // triplets (x, y, visibility); 0 without "keypoints"
};

class CocoAnnotations {
 public:
  /// Reads `path`. Throws InputError naming the file and the element for anything it cannot use: not JSON,
  /// no "images" or "annotations" list, a field of the wrong type, a bbox that is not 4 numbers or has a
  /// negative size, a polygon with an odd count of numbers, an RLE whose runs do not fill its size, an
  /// annotation whose image_id names no image (pycocotools keeps it where torchvision never reads it: here
  /// it is a mistake to fix) or whose category_id names no category (when the file lists categories), an
  /// image id given twice.
  static std::shared_ptr<const CocoAnnotations> read(const std::string& path);

  const std::string& path() const { return path_; }
  /// Images, sorted by id.
  int64_t size() const { return static_cast<int64_t>(images_.size()); }
  CocoImageInfo image(int64_t i) const;
  /// Image `i`'s file_name, a view into this object.
  std::string_view file_name(int64_t i) const;
  /// The images' ids in order: torchvision's `dataset.ids`.
  std::vector<int64_t> ids() const;
  /// Annotations of image `i`, in the file's order.
  int64_t annotation_count(int64_t i) const;
  const CocoAnnotation& annotation(int64_t i, int64_t k) const;
  /// Categories as the file lists them: (id, name).
  const std::vector<std::pair<int64_t, std::string>>& categories() const { return categories_; }

  /// Image `i`'s boxes as torchvision converts them: XYWH as float32, then x2 = x + w, y2 = y + h in float32;
  /// 4 floats per annotation appended to `out` (cleared first).
  void boxes_xyxy(int64_t i, std::vector<float>& out) const;
  /// Image `i`'s category ids (torchvision's "labels"), into `out` (cleared first).
  void labels(int64_t i, std::vector<int64_t>& out) const;
  /// Image `i`'s masks on its decoded canvas [height, width]: annotation_count(i) masks of height * width bytes
  /// (0 or 1) written to `out`, as pycocotools decodes them. Throws InputError naming the annotation for a
  /// segmentation pycocotools cannot rasterize either: none, an empty list, a first polygon of fewer than 3
  /// points, an RLE whose size is not the canvas.
  void masks(int64_t i, int64_t height, int64_t width, uint8_t* out) const;
  /// Image `i`'s keypoints from each annotation's "keypoints" triplets [x1, y1, v1, ...]: x, y as float32 into
  /// `xy` (annotation_count(i) * K * 2, cleared first) and v into `visibility` (annotation_count(i) * K) unless it
  /// is nullptr; returns K. An annotation without "keypoints" has none; annotations of one image with different
  /// counts throw InputError naming the annotation (a KeyPoints tensor [N, K, 2] has one K).
  int64_t keypoints(int64_t i, std::vector<float>& xy, std::vector<int64_t>* visibility) const;

  /// Polygon `k` of an annotation (a.count of them): its numbers x0, y0, x1, y1, ... into `out` (cleared
  /// first), the doubles the file's decimals parse to.
  void polygon(const CocoAnnotation& a, int64_t k, std::vector<double>& out) const;
  int64_t polygon_size(const CocoAnnotation& a, int64_t k) const { return polygons_[static_cast<size_t>(a.first + k)].size; }
  /// The runs of an uncompressed RLE annotation; the text of a compressed one.
  const uint32_t* rle_counts(const CocoAnnotation& a) const { return counts_.data() + a.first; }
  std::string_view rle_text(const CocoAnnotation& a) const { return {text_.data() + a.first, static_cast<size_t>(a.count)}; }

 private:
  friend class CocoReader;
  struct Image {
    int64_t id, height, width;
    int64_t name_offset, name_size;  // in text_
    int64_t first, count;            // in annotations_
  };
  std::string path_;
  std::vector<Image> images_;
  std::vector<CocoAnnotation> annotations_;  // grouped by image, in the file's order within an image
  std::vector<std::pair<int64_t, std::string>> categories_;
  // A polygon's numbers are kept as int32 hundredths when each is exactly such a decimal (COCO writes 2 decimals:
  // half the memory of doubles), else as doubles (2 words each).
  struct Polygon {
    const uint32_t* words;
    int64_t size : 63;  // numbers: twice the points
    bool hundredths : 1;
  };
  std::vector<Polygon> polygons_;
  // The polygons' words, in blocks that never move (a growing vector would hold its old and new copy at once).
  std::vector<std::unique_ptr<uint32_t[]>> coordinate_blocks_;
  std::vector<uint32_t> counts_;
  std::vector<float> keypoint_values_;       // every annotation's "keypoints" numbers, x, y, v (float32: torch.tensor's)
  std::string text_;                         // file names and compressed RLE counts
};

} // namespace fastloop
