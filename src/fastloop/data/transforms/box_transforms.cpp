// The transforms of transforms.v2 that act on bounding boxes alone: SanitizeBoundingBoxes (drops degenerate
// and out-of-canvas boxes with their labels and instance masks), ClampBoundingBoxes and
// ConvertBoundingBoxFormat. On a sample without boxes the last two pass and SanitizeBoundingBoxes raises, as
// torchvision's ("No bounding boxes were found in the sample"); on images alone (no targets) they are refused.
#include "fastloop/data/transforms/families.h"
#include "fastloop/data/transforms/functional/boxes.h"
#include "fastloop/data/transforms/spec.h"

#include <memory>

namespace fastloop {
namespace {

// The base of the three: no pixels touched, and no meaning without boxes.
class BoxTransform : public Transform {
 public:
  explicit BoxTransform(std::string repr) : repr_(std::move(repr)) {}
  std::string repr() const override { return repr_; }
  void apply(ImageU8&, Draws&, TransformScratch&) const override {
    throw TransformTypeError(repr_ + " acts on bounding boxes, and this data set's samples have none (a detection "
                             "source such as fastloop.CocoDetection gives them)");
  }
  TargetSupport target_support() const override { return TargetSupport::kMoves; }
  bool touches_pixels() const override { return false; }

 protected:
  void require_boxes(const SampleTargets& targets) const {
    if (!targets.has_boxes) throw InputError(repr_ + ": No bounding boxes were found in the sample");
  }

 private:
  std::string repr_;
};

class SanitizeBoundingBoxes final : public BoxTransform {
 public:
  SanitizeBoundingBoxes(const TransformArgs& args, double min_size, double min_area, bool labels)
      : BoxTransform("SanitizeBoundingBoxes(min_size=" + float_repr(min_size) + ", min_area=" + float_repr(min_area) +
                     ", labels_getter=" + value_repr(args.get("labels_getter")) + ")"),
        min_size_(min_size),
        min_area_(min_area),
        labels_(labels) {}
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws&, TransformScratch&) const override {
    require_boxes(targets);
    const std::vector<int64_t> labels = labels_ ? std::vector<int64_t>{} : targets.labels;  // labels_getter=None
    targets.keep(boxes_valid(targets.boxes, image.height, image.width, min_size_, min_area_));
    if (!labels_) targets.labels = labels;
  }

 private:
  double min_size_, min_area_;
  bool labels_;
};

class ClampBoundingBoxes final : public BoxTransform {
 public:
  // clamps: soft or hard (the same on axis-aligned boxes); automatic: "auto", the boxes' own clamping_mode
  ClampBoundingBoxes(const TransformArgs& args, bool clamps, bool automatic)
      : BoxTransform("ClampBoundingBoxes(clamping_mode=" + value_repr(args.get("clamping_mode")) + ")"),
        clamps_(clamps),
        automatic_(automatic) {}
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws&, TransformScratch&) const override {
    if (clamps_ && (!automatic_ || targets.clamp_boxes))  // a sample without boxes passes
      boxes_clamp(targets.boxes, image.height, image.width);
  }

 private:
  bool clamps_, automatic_;
};

class ConvertBoundingBoxFormat final : public BoxTransform {
 public:
  explicit ConvertBoundingBoxFormat(BoxFormat format)
      : BoxTransform(std::string("ConvertBoundingBoxFormat(format=BoundingBoxFormat.") + box_format_name(format) + ")"),
        format_(format) {}
  void apply_targets(ImageU8&, SampleTargets& targets, Draws&, TransformScratch&) const override {
    targets.format = format_;  // a sample without boxes passes  // boxes stay XYXY inside; written in this format at the end
  }

 private:
  BoxFormat format_;
};

bool labels_getter_of(const TransformArgs& args) {
  const TransformValue& value = args.get("labels_getter");
  if (value.kind == TransformValue::Kind::kNone) return false;
  if (value.kind == TransformValue::Kind::kString && value.text == "default") return true;
  throw TransformTypeError("SanitizeBoundingBoxes(): labels_getter must be 'default' or None (a callable cannot run "
                           "in fastloop's workers), got " + value_repr(value));
}

}  // namespace

void transforms_register_boxes(TransformRegistry& registry) {
  registry.add("SanitizeBoundingBoxes",
               {{"min_size", value_float(1.0)}, {"min_area", value_float(1.0)}, {"labels_getter", value_string("default")}},
               [](const TransformArgs& args) -> TransformPtr {
                 const double min_size = args.get_double("min_size"), min_area = args.get_double("min_area");
                 if (min_size < 1) throw InputError("min_size must be >= 1, got " + float_repr(min_size) + ".");
                 if (min_area < 1) throw InputError("min_area must be >= 1, got " + float_repr(min_area) + ".");
                 return std::make_shared<SanitizeBoundingBoxes>(args, min_size, min_area, labels_getter_of(args));
               });
  registry.add("ClampBoundingBoxes", {{"clamping_mode", value_string("auto")}},
               [](const TransformArgs& args) -> TransformPtr {
                 if (args.is_none("clamping_mode")) return std::make_shared<ClampBoundingBoxes>(args, false, false);
                 const std::string mode = args.get_string("clamping_mode");
                 if (mode != "soft" && mode != "hard" && mode != "auto")
                   throw InputError("clamping_mode must be soft, hard, auto or None, got " + mode);
                 return std::make_shared<ClampBoundingBoxes>(args, true, mode == "auto");
               });
  registry.add("ConvertBoundingBoxFormat", {param_required("format")}, [](const TransformArgs& args) -> TransformPtr {
    return std::make_shared<ConvertBoundingBoxFormat>(box_format_parse(args.get_string("format")));
  });
}

}  // namespace fastloop
