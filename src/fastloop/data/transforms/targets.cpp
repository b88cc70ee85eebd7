#include "fastloop/data/transforms/targets.h"

#include "fastloop/core/errors.h"

#include <cctype>
#include <utility>

namespace fastloop {

BoxFormat box_format_parse(const std::string& name) {
  std::string upper;
  for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string prefix = "BOUNDINGBOXFORMAT.";
  if (upper.rfind(prefix, 0) == 0) upper = upper.substr(prefix.size());
  if (upper == "XYXY") return BoxFormat::kXYXY;
  if (upper == "XYWH") return BoxFormat::kXYWH;
  if (upper == "CXCYWH") return BoxFormat::kCXCYWH;
  throw InputError("bounding box format '" + name + "' is not one fastloop moves (XYXY, XYWH or CXCYWH; the rotated "
                   "formats are not supported)");
}

const char* box_format_name(BoxFormat format) {
  switch (format) {
    case BoxFormat::kXYXY: return "XYXY";
    case BoxFormat::kXYWH: return "XYWH";
    case BoxFormat::kCXCYWH: return "CXCYWH";
  }
  return "XYXY";
}

void SampleTargets::keep(const std::vector<bool>& valid) {
  const int64_t n = box_count();
  if (!labels.empty() && static_cast<int64_t>(labels.size()) != n)  // SanitizeKeyPoints dropped some: torch's IndexError
    throw InputError("SanitizeBoundingBoxes: the sample has " + std::to_string(n) + " boxes and " +
                     std::to_string(labels.size()) + " labels (a SanitizeKeyPoints with labels_getter='default' before "
                     "it dropped labels with their keypoints); give one of them labels_getter=None");
  int64_t out = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!valid[static_cast<size_t>(i)]) continue;
    for (int k = 0; k < 4; ++k) boxes[static_cast<size_t>(out * 4 + k)] = boxes[static_cast<size_t>(i * 4 + k)];
    if (!labels.empty()) labels[static_cast<size_t>(out)] = labels[static_cast<size_t>(i)];
    if (!kept.empty()) kept[static_cast<size_t>(out)] = kept[static_cast<size_t>(i)];
    if (instance_masks && out != i) std::swap(masks[static_cast<size_t>(out)], masks[static_cast<size_t>(i)]);
    ++out;
  }
  boxes.resize(static_cast<size_t>(out * 4));
  if (!labels.empty()) labels.resize(static_cast<size_t>(out));
  if (!kept.empty()) kept.resize(static_cast<size_t>(out));
  if (instance_masks) masks.resize(static_cast<size_t>(out));
}

std::optional<std::vector<double>> mask_fill(const std::optional<std::vector<double>>& fill,
                                             const std::string& transform) {
  if (!fill || fill->size() <= 1) return fill;
  throw InputError(transform + "(): fill has " + std::to_string(fill->size()) +
                   " values, one per image channel, and masks have one channel: give one number as fill");
}

void boxes_to_format(const std::vector<double>& xyxy, BoxFormat format, std::vector<double>& out) {
  out.resize(xyxy.size());
  for (size_t i = 0; i + 3 < xyxy.size(); i += 4) {
    const double x1 = xyxy[i], y1 = xyxy[i + 1], x2 = xyxy[i + 2], y2 = xyxy[i + 3];
    if (format == BoxFormat::kXYXY) {
      out[i] = x1, out[i + 1] = y1, out[i + 2] = x2, out[i + 3] = y2;
    } else if (format == BoxFormat::kXYWH) {
      out[i] = x1, out[i + 1] = y1, out[i + 2] = x2 - x1, out[i + 3] = y2 - y1;
    } else {
      out[i] = (x1 + x2) / 2, out[i + 1] = (y1 + y2) / 2, out[i + 2] = x2 - x1, out[i + 3] = y2 - y1;
    }
  }
}

void boxes_from_format(const std::vector<double>& boxes, BoxFormat format, std::vector<double>& xyxy) {
  xyxy.resize(boxes.size());
  for (size_t i = 0; i + 3 < boxes.size(); i += 4) {
    const double a = boxes[i], b = boxes[i + 1], c = boxes[i + 2], d = boxes[i + 3];
    if (format == BoxFormat::kXYXY) {
      xyxy[i] = a, xyxy[i + 1] = b, xyxy[i + 2] = c, xyxy[i + 3] = d;
    } else if (format == BoxFormat::kXYWH) {
      xyxy[i] = a, xyxy[i + 1] = b, xyxy[i + 2] = a + c, xyxy[i + 3] = b + d;
    } else {
      xyxy[i] = a - c / 2, xyxy[i + 1] = b - d / 2, xyxy[i + 2] = a + c / 2, xyxy[i + 3] = b + d / 2;
    }
  }
}

} // namespace fastloop
