// crop_views.h's expansion of FiveCrop / TenCrop into views, and the crop each view takes (five_crop_image:
// top-left, top-right, bottom-left, bottom-right, centre; ten_crop_image: those, then the same of the image
// flipped horizontally, or vertically with vertical_flip).
#include "fastloop/data/transforms/crop_views.h"
#include "fastloop/data/transforms/families.h"

#include "fastloop/data/transforms/functional/crop_pad.h"
#include "fastloop/data/transforms/functional/flip.h"
#include "fastloop/data/transforms/geometry_args.h"

#include <memory>
#include <utility>

namespace fastloop {
namespace {

const std::vector<TransformParam>& crop_views_signature(const std::string& name) {
  static const std::vector<TransformParam> five = {param_required("size")};
  static const std::vector<TransformParam> ten = {param_required("size"), {"vertical_flip", value_bool(false)}};
  return name == "FiveCrop" ? five : ten;
}

bool crop_views_is_crop(const std::string& name) { return name == "FiveCrop" || name == "TenCrop"; }

// The FiveCrop / TenCrop as torchvision's constructor keeps it: size (h, w), vertical_flip.
struct CropTuple {
  std::array<int64_t, 2> size{};
  bool vertical_flip = false;
  int64_t count = 5;
  std::string repr;
};

CropTuple crop_views_parse(const TransformSpec& spec) {
  const TransformArgs args(spec, crop_views_signature(spec.name));
  CropTuple crop;
  crop.size = geo_size(args, "size", "Please provide only two dimensions (h, w) for size.");
  crop.repr = spec.name + "(size=" + value_repr(value_ints({crop.size[0], crop.size[1]}));
  if (spec.name == "TenCrop") {
    crop.vertical_flip = args.get_bool("vertical_flip");
    crop.count = 10;
    crop.repr += std::string(", vertical_flip=") + (crop.vertical_flip ? "True" : "False");
  }
  crop.repr += ")";
  return crop;
}

TransformSpec crop_views_view(const CropTuple& crop, int64_t index) {
  TransformSpec view;
  view.name = "_CropView";
  view.keywords = {{"size", value_ints({crop.size[0], crop.size[1]})},
                   {"index", value_int(index)},
                   {"vertical_flip", value_bool(crop.vertical_flip)}};
  return view;
}

// The transforms of a container's spec (its first positional, or `transforms=`).
const std::vector<TransformSpec>* crop_views_children(const TransformSpec& spec) {
  for (const TransformValue& v : spec.positional)
    if (v.kind == TransformValue::Kind::kTransforms) return &v.transforms;
  for (const auto& [name, v] : spec.keywords)
    if (v.kind == TransformValue::Kind::kTransforms) return &v.transforms;
  return nullptr;
}

// Whether `specs` holds a FiveCrop / TenCrop at any depth; its name in `found`.
bool crop_views_inside(const std::vector<TransformSpec>& specs, std::string& found) {
  for (const TransformSpec& spec : specs) {
    if (crop_views_is_crop(spec.name)) {
      found = spec.name;
      return true;
    }
    const auto* children = crop_views_children(spec);
    if (children && crop_views_inside(*children, found)) return true;
  }
  return false;
}

// `specs` with its Composes flattened into `flat`; a crop inside another container throws.
void crop_views_flatten(const std::vector<TransformSpec>& specs, std::vector<TransformSpec>& flat) {
  for (const TransformSpec& spec : specs) {
    const auto* children = crop_views_children(spec);
    std::string found;
    if (spec.name == "Compose" && children) {
      crop_views_flatten(*children, flat);
    } else if (children && crop_views_inside(*children, found)) {
      throw TransformTypeError(found + " inside " + spec.name + ": fastloop runs " + found +
                               "'s tuple of crops as views of every image, which a random container cannot "
                               "leave out or reorder; put " + found + " in the pipeline itself (or a Compose)");
    } else {
      flat.push_back(spec);
    }
  }
}

// One crop of FiveCrop / TenCrop's tuple.
class CropView final : public Transform {
 public:
  explicit CropView(const TransformArgs& args)
      : size_(geo_size(args, "size", "Please provide only two dimensions (h, w) for size.")),
        index_(args.get_int("index")),
        vertical_flip_(args.get_bool("vertical_flip")) {
    if (index_ < 0 || index_ >= 10) throw InputError("_CropView: index must be 0 to 9, got " + std::to_string(index_));
    repr_ = "_CropView(size=" + value_repr(value_ints({size_[0], size_[1]})) + ", index=" + std::to_string(index_) +
            ", vertical_flip=" + (vertical_flip_ ? "True" : "False") + ")";
  }
  std::string repr() const override { return repr_; }
  void apply(ImageU8& image, Draws&, TransformScratch& scratch) const override {
    const int64_t h = size_[0], w = size_[1], height = image.height, width = image.width;
    if (w > width || h > height) {
      throw InputError("Requested crop size (" + std::to_string(h) + ", " + std::to_string(w) +
                       ") is bigger than input size (" + std::to_string(height) + ", " + std::to_string(width) +
                       ") (" + std::string(index_ >= 5 ? "TenCrop" : "FiveCrop") +
                       ": resize the image to at least the crop's size first)");
    }
    if (index_ >= 5) vertical_flip_ ? vertical_flip_u8(image) : horizontal_flip_u8(image);
    int64_t top = 0, left = 0;
    switch (index_ % 5) {
      case 0: break;
      case 1: left = width - w; break;
      case 2: top = height - h; break;
      case 3: top = height - h, left = width - w; break;
      default:  // center_crop_image's anchor: int(round((side - crop) / 2.0))
        top = py_round(static_cast<double>(height - h) / 2.0);
        left = py_round(static_cast<double>(width - w) / 2.0);
    }
    crop_u8(image, top, left, h, w, scratch.spare, scratch);
    std::swap(image, scratch.spare);
  }
  ImageSize output_size(ImageSize) const override { return {size_[0], size_[1]}; }

 private:
  std::array<int64_t, 2> size_;
  int64_t index_;
  bool vertical_flip_;
  std::string repr_;
};

}  // namespace

CropViews crop_views_expand(const std::vector<TransformSpec>& specs) {
  CropViews out;
  std::string found;
  if (!crop_views_inside(specs, found)) {
    out.views.push_back(specs);
    return out;
  }
  std::vector<TransformSpec> flat;
  crop_views_flatten(specs, flat);
  size_t at = flat.size();
  for (size_t i = 0; i < flat.size(); ++i) {
    if (!crop_views_is_crop(flat[i].name)) continue;
    if (at != flat.size()) {
      throw TransformTypeError(flat[i].name + " after " + flat[at].name + ": torchvision would crop each crop into a "
                               "nested tuple, which fastloop's views cannot hold; keep one FiveCrop or TenCrop");
    }
    at = i;
  }
  const CropTuple crop = crop_views_parse(flat[at]);
  out.crop_repr = crop.repr;
  for (int64_t v = 0; v < crop.count; ++v) {
    std::vector<TransformSpec> view = flat;
    view[at] = crop_views_view(crop, v);
    out.views.push_back(std::move(view));
  }
  // as CropView::repr() writes view 0
  out.view_marker = "_CropView(size=" + value_repr(value_ints({crop.size[0], crop.size[1]})) +
                    ", index=0, vertical_flip=" + (crop.vertical_flip ? "True" : "False") + ")";
  return out;
}

void transforms_register_crop_views(TransformRegistry& registry) {
  for (const char* name : {"FiveCrop", "TenCrop"}) {
    registry.add(name, crop_views_signature(name), [name](const TransformArgs& args) -> TransformPtr {
      geo_size(args, "size", "Please provide only two dimensions (h, w) for size.");  // torchvision's checks first
      const std::string count = std::string(name) == "FiveCrop" ? "5" : "10";
      throw TransformTypeError(std::string(name) + " returns a tuple of " + count +
                               " crops, which a pipeline of one image cannot hold: fastloop.Loader(transform=...) "
                               "runs a pipeline with " + name + " (in it or in a Compose, not in a random "
                               "container) as " + count + " views, batches as DataLoader collates the tuple (a list "
                               "of " + count + " tensors [B, C, H, W])");
    });
  }
  registry.add("_CropView", {param_required("size"), param_required("index"), {"vertical_flip", value_bool(false)}},
               [](const TransformArgs& args) -> TransformPtr { return std::make_shared<CropView>(args); });
}

}  // namespace fastloop
