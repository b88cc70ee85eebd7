// CocoAnnotations' accessors and the targets of one image as torchvision's wrap_dataset_for_transforms_v2 makes
// them; the file is read in coco_annotations_read.cpp.
#include "fastloop/data/targets/coco_annotations.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/targets/coco_mask.h"

#include <cstring>

namespace fastloop {

CocoImageInfo CocoAnnotations::image(int64_t i) const {
  const Image& image = images_.at(static_cast<size_t>(i));
  return {image.id, text_.substr(static_cast<size_t>(image.name_offset), static_cast<size_t>(image.name_size)), image.height,
          image.width};
}

std::string_view CocoAnnotations::file_name(int64_t i) const {
  const Image& image = images_.at(static_cast<size_t>(i));
  return std::string_view(text_).substr(static_cast<size_t>(image.name_offset), static_cast<size_t>(image.name_size));
}

std::vector<int64_t> CocoAnnotations::ids() const {
  std::vector<int64_t> ids;
  ids.reserve(images_.size());
  for (const Image& image : images_) ids.push_back(image.id);
  return ids;
}

int64_t CocoAnnotations::annotation_count(int64_t i) const { return images_.at(static_cast<size_t>(i)).count; }

const CocoAnnotation& CocoAnnotations::annotation(int64_t i, int64_t k) const {
  const Image& image = images_.at(static_cast<size_t>(i));
  if (k < 0 || k >= image.count) throw std::out_of_range("CocoAnnotations::annotation: no annotation " + std::to_string(k));
  return annotations_[static_cast<size_t>(image.first + k)];
}

void CocoAnnotations::polygon(const CocoAnnotation& a, int64_t k, std::vector<double>& out) const {
  const Polygon& p = polygons_.at(static_cast<size_t>(a.first + k));
  out.resize(static_cast<size_t>(p.size));
  if (p.hundredths) {
    for (size_t j = 0; j < out.size(); ++j) out[j] = static_cast<int32_t>(p.words[j]) / 100.0;  // exact: see read
  } else {
    std::memcpy(out.data(), p.words, out.size() * sizeof(double));
  }
}

void CocoAnnotations::boxes_xyxy(int64_t i, std::vector<float>& out) const {
  const int64_t n = annotation_count(i);
  out.resize(static_cast<size_t>(4 * n));
  for (int64_t k = 0; k < n; ++k) {
    const double* b = annotation(i, k).bbox;
    const float x = static_cast<float>(b[0]), y = static_cast<float>(b[1]);  // float32 first, as torch.tensor(list)
    float* o = out.data() + 4 * k;
    o[0] = x, o[1] = y, o[2] = x + static_cast<float>(b[2]), o[3] = y + static_cast<float>(b[3]);
  }
}

int64_t CocoAnnotations::keypoints(int64_t i, std::vector<float>& xy, std::vector<int64_t>* visibility) const {
  const int64_t n = annotation_count(i);
  const int64_t per = n == 0 ? 0 : annotation(i, 0).keypoint_count;
  xy.resize(static_cast<size_t>(n * per * 2));
  if (visibility) visibility->resize(static_cast<size_t>(n * per));
  for (int64_t k = 0; k < n; ++k) {
    const CocoAnnotation& a = annotation(i, k);
    if (a.keypoint_count != per)
      throw InputError(path_ + ": annotation id " + std::to_string(a.id) + " (image id " +
                       std::to_string(images_[static_cast<size_t>(i)].id) + ") has " + std::to_string(a.keypoint_count) +
                       " keypoints where the image's first annotation has " + std::to_string(per) +
                       ": keypoints [N, K, 2] need the same K for every annotation of an image; leave \"keypoints\" "
                       "out of target_keys or give each annotation the same keypoints");
    const float* v = keypoint_values_.data() + a.keypoints_first;
    for (int64_t p = 0; p < per; ++p) {
      xy[static_cast<size_t>((k * per + p) * 2)] = v[3 * p];
      xy[static_cast<size_t>((k * per + p) * 2 + 1)] = v[3 * p + 1];
      if (visibility) (*visibility)[static_cast<size_t>(k * per + p)] = static_cast<int64_t>(v[3 * p + 2]);
    }
  }
  return per;
}

void CocoAnnotations::labels(int64_t i, std::vector<int64_t>& out) const {
  const int64_t n = annotation_count(i);
  out.resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) out[static_cast<size_t>(k)] = annotation(i, k).category_id;
}

void CocoAnnotations::masks(int64_t i, int64_t height, int64_t width, uint8_t* out) const {
  const int64_t n = annotation_count(i);
  if (n == 0) return;
  if (height <= 0 || width <= 0 || height * width > int64_t{INT32_MAX})  // maskApi.c computes positions in int
    throw InputError(path_ + ": image id " + std::to_string(images_[static_cast<size_t>(i)].id) + ": cannot make masks of " +
                     std::to_string(height) + " x " + std::to_string(width) + " pixels");
  const size_t plane = static_cast<size_t>(height * width);
  std::memset(out, 0, plane * static_cast<size_t>(n));
  std::vector<uint32_t> scratch;
  std::vector<double> xy;
  for (int64_t k = 0; k < n; ++k) {
    const CocoAnnotation& a = annotation(i, k);
    uint8_t* mask = out + plane * static_cast<size_t>(k);
    const auto fail = [&](const std::string& what) {
      throw InputError(path_ + ": annotation id " + std::to_string(a.id) + " (image id " +
                       std::to_string(images_[static_cast<size_t>(i)].id) + "): " + what);
    };
    switch (a.segmentation) {
      case CocoSegmentation::kNone:
        fail("has no \"segmentation\" to make a mask of; add one, or leave \"masks\" out of target_keys");
        break;
      case CocoSegmentation::kPolygons:
        // pycocotools' frPyObjects reads a list whose first entry has 4 numbers or fewer as boxes or refuses it
        if (a.count == 0 || polygon_size(a, 0) <= 4)
          fail("a segmentation whose first polygon has fewer than 3 points cannot be rasterized (pycocotools "
               "refuses it too); remove the polygon or the annotation");
        for (int64_t p = 0; p < a.count; ++p) {
          polygon(a, p, xy);
          coco_polygon_fill(xy.data(), static_cast<int64_t>(xy.size() / 2), height, width, mask, scratch);
        }
        break;
      case CocoSegmentation::kRleCounts:
      case CocoSegmentation::kRleString:
        if (a.rle_height != height || a.rle_width != width)
          fail("its RLE's size " + std::to_string(a.rle_height) + " x " + std::to_string(a.rle_width) +
               " is not the image's " + std::to_string(height) + " x " + std::to_string(width) +
               "; check the image file and the annotation's \"size\"");
        if (a.segmentation == CocoSegmentation::kRleCounts) {
          coco_rle_fill(rle_counts(a), a.count, height, width, mask);
        } else {
          scratch.clear();
          coco_rle_from_string(rle_text(a), scratch);  // checked when read
          coco_rle_fill(scratch.data(), static_cast<int64_t>(scratch.size()), height, width, mask);
        }
        break;
    }
  }
}

} // namespace fastloop
