// JPEG as torchvision.transforms.v2 defines it (_augment.py): the constructor's checks with torchvision's
// messages, make_params' quality (torch.randint(min, max + 1) -> Draws::below), and functional/jpeg.h's round
// trip through libjpeg-turbo. Boxes and masks pass through, as torchvision's kernel has none for them.
#include "fastloop/data/transforms/families.h"
#include "fastloop/data/transforms/functional/jpeg.h"

#include <memory>
#include <string>

namespace fastloop {
namespace {

class JpegTransform final : public Transform {
 public:
  explicit JpegTransform(const TransformArgs& args) {
    const TransformValue& q = args.get("quality");
    using Kind = TransformValue::Kind;
    if (q.kind == Kind::kBool) throw TransformTypeError("quality can't be bool");
    std::vector<TransformValue> items;
    if (q.kind == Kind::kInt) {
      items = {q, q};
    } else {
      // _check_sequence_input(quality, "quality", req_sizes=(2,))
      if (q.kind != Kind::kList) throw TransformTypeError("quality should be a sequence of length 2.");
      if (q.list.size() != 2) throw InputError("quality should be a sequence of length 2.");
      items = q.list;
    }
    const bool ints = items[0].kind == Kind::kInt && items[1].kind == Kind::kInt;
    if (!(ints && 1 <= items[0].integer && items[0].integer <= items[1].integer && items[1].integer <= 100)) {
      // as torchvision's f"{quality =}": the value as the object holds it (a list for a single int)
      std::string held = value_repr(q);
      if (q.kind == Kind::kInt) held = std::string("[").append(held).append(", ").append(held).append("]");
      throw InputError("quality must be an integer from 1 to 100, got quality =" + held);
    }
    min_ = items[0].integer;
    max_ = items[1].integer;
    repr_ = "JPEG(quality=" + value_repr(value_ints({min_, max_})) + ")";
  }
  std::string repr() const override { return repr_; }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    jpeg_roundtrip_u8(image, quality(draws), scratch);
  }
  TransformDraw draw(int64_t, int64_t, Draws& draws) const override {
    return {{"quality", {static_cast<double>(quality(draws))}}};
  }
  TargetSupport target_support() const override { return TargetSupport::kPixels; }

 private:
  int64_t quality(Draws& draws) const { return min_ + draws.below(max_ - min_ + 1); }
  int64_t min_ = 0, max_ = 0;
  std::string repr_;
};

}  // namespace

void transforms_register_jpeg(TransformRegistry& registry) {
  registry.add("JPEG", {param_required("quality")},
               [](const TransformArgs& args) -> TransformPtr { return std::make_shared<JpegTransform>(args); });
}

}  // namespace fastloop
