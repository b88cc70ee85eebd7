// The transforms of transforms.v2 that act on keypoints and on the boxes' clamping mode alone: ClampKeyPoints
// (points to [0, side - 1]), SanitizeKeyPoints (drops the groups of points outside the canvas, with their labels
// when labels_getter finds them) and SetClampingMode (whether later geometric kernels clamp the boxes). No pixel is
// touched; on images alone (no targets) they are refused, as the box transforms are (box_transforms.cpp).
#include "fastloop/data/transforms/families.h"
#include "fastloop/data/transforms/functional/keypoints.h"
#include "fastloop/data/transforms/spec.h"

#include <memory>
#include <sstream>

namespace fastloop {
namespace {

class KeyPointTransform : public Transform {
 public:
  KeyPointTransform(std::string repr, std::string acts_on) : repr_(std::move(repr)), acts_on_(std::move(acts_on)) {}
  std::string repr() const override { return repr_; }
  void apply(ImageU8&, Draws&, TransformScratch&) const override {
    throw TransformTypeError(repr_ + " acts on " + acts_on_ + ", and this data set's samples have none (a source "
                             "with targets such as fastloop.CocoDetection gives them)");
  }
  TargetSupport target_support() const override { return TargetSupport::kMoves; }
  bool touches_pixels() const override { return false; }

 private:
  std::string repr_, acts_on_;
};

// torch.Size([2, 17, 2]) as torchvision's message writes a shape.
std::string torch_size(const std::vector<int64_t>& shape, bool points) {
  std::ostringstream out;
  out << "torch.Size([";
  for (size_t d = 0; d < shape.size(); ++d) out << (d ? ", " : "") << shape[d];
  if (points) out << (shape.empty() ? "" : ", ") << 2;
  out << "])";
  return out.str();
}

class ClampKeyPoints final : public KeyPointTransform {
 public:
  ClampKeyPoints() : KeyPointTransform("ClampKeyPoints()", "keypoints") {}
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws&, TransformScratch&) const override {
    keypoints_clamp(targets.keypoints, image.height, image.width);  // a sample without keypoints passes
  }
};

class SanitizeKeyPoints final : public KeyPointTransform {
 public:
  SanitizeKeyPoints(const TransformArgs& args, bool labels)
      : KeyPointTransform("SanitizeKeyPoints(labels_getter=" + value_repr(args.get("labels_getter")) + ")", "keypoints"),
        labels_(labels) {}
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws&, TransformScratch&) const override {
    if (!targets.has_keypoints) throw InputError(repr() + ": No keypoints were found in the sample");
    const std::vector<int64_t>& shape = targets.keypoints_shape;
    const bool with_labels = labels_ && (targets.has_boxes || !targets.labels.empty());  // "default" finds "labels"
    if (with_labels && (shape.empty() || static_cast<int64_t>(targets.labels.size()) != shape[0]))
      throw InputError("Number of kepyoints (shape=" + torch_size(shape, true) + ") must match the number of labels."
                       "Found labels with shape=" + torch_size({static_cast<int64_t>(targets.labels.size())}, false) + ").");
    const std::vector<bool> valid = keypoints_valid(targets.keypoints, shape, image.height, image.width);
    keypoints_keep(targets.keypoints, targets.keypoints_shape, valid);
    if (!with_labels) return;
    size_t out = 0;
    for (size_t i = 0; i < valid.size(); ++i)
      if (valid[i]) targets.labels[out++] = targets.labels[i];
    targets.labels.resize(out);
  }

 private:
  bool labels_;
};

class SetClampingMode final : public KeyPointTransform {
 public:
  SetClampingMode(const TransformArgs& args, bool clamps)
      : KeyPointTransform("SetClampingMode(clamping_mode=" + value_repr(args.get("clamping_mode")) + ")",
                          "bounding boxes"),
        clamps_(clamps) {}
  void apply_targets(ImageU8&, SampleTargets& targets, Draws&, TransformScratch&) const override {
    targets.clamp_boxes = clamps_;  // soft and hard clamp axis-aligned boxes alike; a sample without boxes passes
  }

 private:
  bool clamps_;
};

}  // namespace

void transforms_register_keypoints(TransformRegistry& registry) {
  registry.add("ClampKeyPoints", {}, [](const TransformArgs&) -> TransformPtr { return std::make_shared<ClampKeyPoints>(); });
  registry.add("SanitizeKeyPoints", {{"labels_getter", value_none()}}, [](const TransformArgs& args) -> TransformPtr {
    const TransformValue& value = args.get("labels_getter");
    if (value.kind == TransformValue::Kind::kNone) return std::make_shared<SanitizeKeyPoints>(args, false);
    if (value.kind == TransformValue::Kind::kString && value.text == "default")
      return std::make_shared<SanitizeKeyPoints>(args, true);
    throw TransformTypeError("SanitizeKeyPoints(): labels_getter must be 'default' or None (a callable cannot run in "
                             "fastloop's workers), got " + value_repr(value));
  });
  registry.add("SetClampingMode", {param_required("clamping_mode")}, [](const TransformArgs& args) -> TransformPtr {
    if (args.is_none("clamping_mode")) return std::make_shared<SetClampingMode>(args, false);
    const std::string mode = args.get_string("clamping_mode");
    if (mode != "soft" && mode != "hard") throw InputError("clamping_mode must be soft, hard or None, got " + mode);
    return std::make_shared<SetClampingMode>(args, true);
  });
}

}  // namespace fastloop
