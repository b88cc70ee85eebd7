// CocoAnnotations::read: simdjson's On-Demand API over the file a few MiB of list elements at a time
// (json_chunks.h; no DOM: each value is copied into CocoAnnotations' arrays as it is met), then the images sorted by
// id and the annotations grouped by image (a stable counting sort: the file's order within an image, as
// pycocotools' imgToAnns). Every error names the
// file and the element ("annotations[17].bbox"), with the annotation's id once it is known.
#include "fastloop/core/errors.h"
#include "fastloop/data/targets/coco_annotations.h"
#include "fastloop/data/targets/coco_mask.h"
#include "fastloop/data/targets/json_chunks.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <utility>

namespace fastloop {

namespace od = simdjson::ondemand;

namespace {

// Where a value is in the file ("annotations[17].segmentation[0][5]"), spelled out only for an error message: a
// chain of stack frames, so reading a number costs no string.
struct Where {
  const Where* parent = nullptr;
  const char* key = nullptr;  // ".key" (the first: "key"); else "[index]"
  size_t index = 0;
  Where field(const char* name) const { return {this, name, 0}; }
  Where at(size_t i) const { return {this, nullptr, i}; }
  std::string str() const {
    std::string head = parent ? parent->str() : std::string();
    if (!key) return head + "[" + std::to_string(index) + "]";
    return head.empty() ? std::string(key) : head + "." + key;
  }
};

} // namespace

class CocoReader {
 public:
  CocoReader(const std::string& path, CocoAnnotations& out) : path_(path), out_(out) {}

  void read() {
    {
      JsonChunks file(path_);
      od::parser parser;
      bool images = false, annotations = false;
      std::string key;
      while (file.member_next(key)) {
        if (key == "images") images = true, list_read(file, parser, "images", &CocoReader::image_read);
        else if (key == "annotations") annotations = true, list_read(file, parser, "annotations", &CocoReader::annotation_read);
        else if (key == "categories") categories_listed_ = true, list_read(file, parser, "categories", &CocoReader::category_read);
        else file.value_skip();
      }
      const Where top{nullptr, "the file", 0};
      if (!images) fail(top, "has no \"images\" list");
      if (!annotations) fail(top, "has no \"annotations\" list");
    }  // the buffers and simdjson's index are freed before the grouping allocates
    group();
  }

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InputError(path_ + ": " + where + " " + what + "; fix the COCO annotation file");
  }
  [[noreturn]] void fail(const Where& where, const std::string& what) const { fail(where.str(), what); }
  std::string annotation_named(size_t index, int64_t id) const {
    return "annotations[" + std::to_string(index) + "] (id " + std::to_string(id) + ")";
  }

  // A JSON-level error (cut file, bad syntax): simdjson's words and the byte where it stopped.
  void json_check(simdjson::error_code error, const Where& where) const {
    if (!error) return;
    std::string at;
    const char* location = nullptr;
    if (document_ && chunk_ && !document_->current_location().get(location) && location)
      at = " near byte " + std::to_string(chunk_->file_offset + static_cast<size_t>(location - chunk_->data));
    throw InputError(path_ + ": not valid JSON in " + where.str() + at + " (" + simdjson::error_message(error) +
                     "); check that the file is complete (not cut) and is a COCO annotation file");
  }
  // A value of the wrong type is the file's mistake; anything else is a JSON error.
  void typed_check(simdjson::error_code error, const Where& where, const char* what) const {
    if (error == simdjson::INCORRECT_TYPE || error == simdjson::NUMBER_ERROR || error == simdjson::NUMBER_OUT_OF_RANGE)
      fail(where, std::string("must be ") + what);
    json_check(error, where);
  }
  template <typename F>
  void array_each(od::value value, const Where& where, F&& each) {
    od::array array;
    typed_check(value.get_array().get(array), where, "a list");
    size_t index = 0;
    for (auto element : array) {
      od::value item;
      json_check(element.get(item), where);
      each(item, index++);
    }
  }
  template <typename F>
  void object_each(od::value value, const Where& where, F&& each) {
    od::object object;
    typed_check(value.get_object().get(object), where, "an object");
    for (auto member : object) {
      od::field field;
      json_check(std::move(member).get(field), where);
      std::string_view key;
      json_check(field.unescaped_key().get(key), where);
      each(key, field.value());
    }
  }
  int64_t integer(od::value value, const Where& where) {
    int64_t v = 0;
    typed_check(value.get_int64().get(v), where, "an integer");
    return v;
  }
  double number(od::value value, const Where& where) {
    double v = 0;
    typed_check(value.get_double().get(v), where, "a number");
    return v;
  }
  std::string_view text(od::value value, const Where& where) {
    std::string_view v;
    typed_check(value.get_string().get(v), where, "a string");
    return v;
  }

  // A top-level list, chunk by chunk: each chunk parsed by simdjson on its own, its elements handed to `each`.
  void list_read(JsonChunks& file, od::parser& parser, const char* name, void (CocoReader::*each)(od::value, const Where&, size_t)) {
    const Where list{nullptr, name, 0};
    if (!file.array_begin()) fail(list, "must be a list");
    JsonSpan chunk;
    while (file.array_chunk(chunk)) {
      od::document doc;
      json_check(parser.iterate(chunk.data, chunk.size, chunk.capacity).get(doc), list);
      document_ = &doc, chunk_ = &chunk;
      od::array array;
      json_check(doc.get_array().get(array), list);
      size_t index = chunk.first_index;
      for (auto element : array) {
        od::value item;
        json_check(element.get(item), list.at(index));
        (this->*each)(item, list.at(index), index);
        ++index;
      }
      document_ = nullptr, chunk_ = nullptr;
    }
  }

  void image_read(od::value item, const Where& where, size_t) {
    CocoAnnotations::Image image{0, 0, 0, static_cast<int64_t>(out_.text_.size()), 0, 0, 0};
    bool id = false, name = false;
    object_each(item, where, [&](std::string_view key, od::value field) {
      if (key == "id") id = true, image.id = integer(field, where.field("id"));
      else if (key == "file_name") {
        const std::string_view file_name = text(field, where.field("file_name"));
        if (!name) out_.text_.append(file_name), image.name_size = static_cast<int64_t>(file_name.size());
        name = true;
      } else if (key == "height") image.height = integer(field, where.field("height"));
      else if (key == "width") image.width = integer(field, where.field("width"));
    });
    if (!id) fail(where, "has no \"id\"");
    const std::string named = where.str() + " (id " + std::to_string(image.id) + ")";
    if (!name) fail(named, "has no \"file_name\"");
    if (image.height < 0 || image.width < 0) fail(named, "has a negative height or width");
    out_.images_.push_back(image);
  }

  void category_read(od::value item, const Where& where, size_t) {
    std::pair<int64_t, std::string> category;
    bool id = false;
    object_each(item, where, [&](std::string_view key, od::value field) {
      if (key == "id") id = true, category.first = integer(field, where.field("id"));
      else if (key == "name") category.second = std::string(text(field, where.field("name")));
    });
    if (!id) fail(where, "has no \"id\"");
    out_.categories_.push_back(std::move(category));
  }

  void annotation_read(od::value item, const Where& where, size_t index) {
    CocoAnnotation a;
    int64_t image_id = 0;
    unsigned seen = 0;  // bits: id, image_id, category_id, bbox
    object_each(item, where, [&](std::string_view key, od::value field) {
      if (key == "id") seen |= 1, a.id = integer(field, where.field("id"));
      else if (key == "image_id") seen |= 2, image_id = integer(field, where.field("image_id"));
      else if (key == "category_id") seen |= 4, a.category_id = integer(field, where.field("category_id"));
      else if (key == "iscrowd") a.iscrowd = integer(field, where.field("iscrowd"));
      else if (key == "area") a.area = number(field, where.field("area"));
      else if (key == "bbox") seen |= 8, bbox_read(field, a, where.field("bbox"));
      else if (key == "segmentation") segmentation_read(field, a, where.field("segmentation"));
      else if (key == "keypoints") keypoints_read(field, a, where.field("keypoints"));
    });
    static const char* const kRequired[4] = {"id", "image_id", "category_id", "bbox"};
    for (int bit = 0; bit < 4; ++bit)
      if (!(seen & (1u << bit)))
        fail(bit == 0 ? where.str() : annotation_named(index, a.id), std::string("has no \"") + kRequired[bit] + "\"");
    if (a.bbox[2] < 0 || a.bbox[3] < 0)
      fail(annotation_named(index, a.id) + ".bbox", "has a negative width or height (COCO boxes are [x, y, width, height])");
    if (a.segmentation == CocoSegmentation::kRleCounts || a.segmentation == CocoSegmentation::kRleString) rle_check(a, index);
    out_.annotations_.push_back(a);
    image_ids_.push_back(image_id);
  }

  void bbox_read(od::value field, CocoAnnotation& a, const Where& where) {
    size_t n = 0;
    od::array array;
    if (field.get_array().get(array)) fail(where, "must be 4 numbers [x, y, width, height]");
    for (auto element : array) {
      od::value item;
      json_check(element.get(item), where);
      double v = 0;
      if (n >= 4 || item.get_double().get(v)) fail(where, "must be 4 numbers [x, y, width, height]");
      a.bbox[n++] = v;
    }
    if (n != 4) fail(where, "must be 4 numbers [x, y, width, height]");
  }

  // "keypoints": [x1, y1, v1, x2, y2, v2, ...] (COCO person keypoints), kept as float32 as torch.tensor keeps them.
  void keypoints_read(od::value field, CocoAnnotation& a, const Where& where) {
    std::vector<float>& values = out_.keypoint_values_;
    a.keypoints_first = static_cast<int64_t>(values.size());
    size_t n = 0;
    array_each(field, where, [&](od::value item, size_t k) {
      values.push_back(static_cast<float>(number(item, where.at(k))));
      ++n;
    });
    if (n % 3 != 0)
      fail(where, "has " + std::to_string(n) + " numbers: keypoints are x, y, visibility triplets (a multiple of 3)");
    a.keypoint_count = static_cast<int64_t>(n / 3);
  }

  void segmentation_read(od::value field, CocoAnnotation& a, const Where& where) {
    od::json_type type{};
    json_check(field.type().get(type), where);
    if (type == od::json_type::array) {
      a.segmentation = CocoSegmentation::kPolygons;
      a.first = static_cast<int64_t>(out_.polygons_.size());
      array_each(field, where, [&](od::value polygon, size_t k) { polygon_read(polygon, where.at(k)); });
      a.count = static_cast<int64_t>(out_.polygons_.size()) - a.first;
    } else if (type == od::json_type::object) {
      rle_read(field, a, where);
    } else {
      fail(where, "must be a list of polygons or an RLE object {\"counts\", \"size\"}");
    }
  }

  void polygon_read(od::value polygon, const Where& where) {
    scratch_.clear();
    bool hundredths = true;
    od::array array;
    typed_check(polygon.get_array().get(array), where, "a list");
    for (auto element : array) {
      double v = 0;
      if (const auto error = element.get_double().get(v)) typed_check(error, where.at(scratch_.size()), "a number");
      // maskApi.c rounds 5 * v to an int and walks the edges point by point: keep both in range
      if (!(std::fabs(v) <= kMaxCoordinate)) fail(where.at(scratch_.size()), "is " + std::to_string(v) + ", beyond +-2^20 pixels");
      hundredths = hundredths && std::nearbyint(v * 100) / 100 == v;
      scratch_.push_back(v);
    }
    if (scratch_.size() % 2 != 0)
      fail(where, "has " + std::to_string(scratch_.size()) + " numbers: a polygon is x, y pairs (an even count)");
    const size_t n = scratch_.size(), words = hundredths ? n : 2 * n;
    if (out_.coordinate_blocks_.empty() || block_used_ + words > block_size_) {
      block_size_ = std::max<size_t>(kBlock, words);
      out_.coordinate_blocks_.emplace_back(new uint32_t[block_size_]);
      block_used_ = 0;
    }
    uint32_t* at = out_.coordinate_blocks_.back().get() + block_used_;
    if (hundredths) {
      for (size_t j = 0; j < n; ++j) at[j] = static_cast<uint32_t>(static_cast<int32_t>(std::nearbyint(scratch_[j] * 100)));
    } else {
      std::memcpy(at, scratch_.data(), n * sizeof(double));
    }
    block_used_ += words;
    out_.polygons_.push_back({at, static_cast<int64_t>(n), hundredths});
  }

  void rle_read(od::value field, CocoAnnotation& a, const Where& where) {
    bool counts = false, size = false;
    object_each(field, where, [&](std::string_view key, od::value value) {
      if (key == "size") {
        const Where at = where.field("size");
        size_t n = 0;
        int64_t hw[2] = {0, 0};
        array_each(value, at, [&](od::value item, size_t k) {
          if (k < 2) hw[k] = integer(item, at.at(k));
          n = k + 1;
        });
        if (n != 2 || hw[0] < 0 || hw[1] < 0 || hw[0] > INT32_MAX || hw[1] > INT32_MAX)
          fail(at, "must be [height, width], 2 non-negative integers");
        size = true, a.rle_height = static_cast<int32_t>(hw[0]), a.rle_width = static_cast<int32_t>(hw[1]);
      } else if (key == "counts") {
        const Where at = where.field("counts");
        counts = true;
        od::json_type type{};
        json_check(value.type().get(type), at);
        if (type == od::json_type::string) {
          const std::string_view s = text(value, at);
          a.segmentation = CocoSegmentation::kRleString;
          a.first = static_cast<int64_t>(out_.text_.size()), a.count = static_cast<int64_t>(s.size());
          out_.text_.append(s);
        } else {
          a.segmentation = CocoSegmentation::kRleCounts;
          a.first = static_cast<int64_t>(out_.counts_.size());
          array_each(value, at, [&](od::value item, size_t k) {
            const int64_t run = integer(item, at.at(k));
            if (run < 0 || run > UINT32_MAX) fail(at.at(k), "must be a run of 0 to 2^32 - 1 pixels");
            out_.counts_.push_back(static_cast<uint32_t>(run));
          });
          a.count = static_cast<int64_t>(out_.counts_.size()) - a.first;
        }
      }
    });
    if (!counts || !size) fail(where, "must have \"counts\" and \"size\" (an RLE) or be a list of polygons");
  }

  // After the whole annotation is read: its id is known for the message.
  void rle_check(const CocoAnnotation& a, size_t index) {
    std::string problem;
    if (a.segmentation == CocoSegmentation::kRleString) {
      runs_.clear();
      problem = coco_rle_from_string(out_.rle_text(a), runs_);
      if (problem.empty()) problem = coco_rle_check(runs_.data(), static_cast<int64_t>(runs_.size()), a.rle_height, a.rle_width);
    } else {
      problem = coco_rle_check(out_.rle_counts(a), a.count, a.rle_height, a.rle_width);
    }
    if (!problem.empty()) fail(annotation_named(index, a.id) + ".segmentation", problem);
  }

  void group();

  static constexpr double kMaxCoordinate = 1 << 20;  // pixels
  static constexpr size_t kBlock = size_t{1} << 21;  // words per block of coordinates: 8 MiB

  const std::string& path_;
  CocoAnnotations& out_;
  od::document* document_ = nullptr;
  const JsonSpan* chunk_ = nullptr;
  bool categories_listed_ = false;
  std::vector<int64_t> image_ids_;  // of each annotation, in the file's order
  std::vector<double> scratch_;
  std::vector<uint32_t> runs_;
  size_t block_used_ = 0, block_size_ = 0;
};

void CocoReader::group() {
  auto& images = out_.images_;
  std::stable_sort(images.begin(), images.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (size_t i = 1; i < images.size(); ++i)
    if (images[i].id == images[i - 1].id) fail(std::string("\"images\""), "lists the id " + std::to_string(images[i].id) + " twice");
  std::vector<int64_t> of(image_ids_.size());  // each annotation's image, by position in `images`
  const auto named = [&](size_t k) { return annotation_named(k, out_.annotations_[k].id); };
  for (size_t k = 0; k < image_ids_.size(); ++k) {
    const auto it = std::lower_bound(images.begin(), images.end(), image_ids_[k], [](const auto& im, int64_t id) { return im.id < id; });
    if (it == images.end() || it->id != image_ids_[k])
      fail(named(k), "has image_id " + std::to_string(image_ids_[k]) + ", which no entry of \"images\" has");
    of[k] = it - images.begin();
    ++it->count;
  }
  if (categories_listed_) {
    std::unordered_map<int64_t, bool> known;
    for (const auto& category : out_.categories_) known[category.first] = true;
    for (size_t k = 0; k < out_.annotations_.size(); ++k)
      if (!known.count(out_.annotations_[k].category_id))
        fail(named(k), "has category_id " + std::to_string(out_.annotations_[k].category_id) + ", which no entry of \"categories\" has");
  }
  int64_t first = 0;
  for (auto& image : images) image.first = first, first += image.count, image.count = 0;
  std::vector<CocoAnnotation> grouped(out_.annotations_.size());
  for (size_t k = 0; k < of.size(); ++k) {
    auto& image = images[static_cast<size_t>(of[k])];
    grouped[static_cast<size_t>(image.first + image.count++)] = out_.annotations_[k];
  }
  out_.annotations_ = std::move(grouped);
}

std::shared_ptr<const CocoAnnotations> CocoAnnotations::read(const std::string& path) {
  auto annotations = std::shared_ptr<CocoAnnotations>(new CocoAnnotations());
  annotations->path_ = path;
  CocoReader(path, *annotations).read();
  return annotations;
}

} // namespace fastloop
