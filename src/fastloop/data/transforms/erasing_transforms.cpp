// RandomErasing: transforms.v2's constructor checks and make_params (the coin, then up to ten boxes of
// area scale x image and aspect ratio exp(U(log ratio)), height first; a box must be strictly inside).
#include "fastloop/data/transforms/erasing_transforms.h"

#include "fastloop/data/transforms/families.h"
#include "fastloop/data/transforms/spec.h"

#include <cmath>

namespace fastloop {
namespace {

constexpr int kEraseTries = 10;

// torch's float -> uint8 store: truncation toward zero, then the low 8 bits; beyond int64 (and NaN) x86's
// conversion gives INT64_MIN, whose low 8 bits are 0 (written out: the cast itself is undefined there).
uint8_t byte_of(double v) {
  const float f = static_cast<float>(v);
  if (!(std::fabs(f) < 9.2233720368547758e18f)) return 0;
  return static_cast<uint8_t>(static_cast<int64_t>(f) & 0xff);
}

}  // namespace

std::string RandomErasingTransform::repr() const {
  std::string value = "'random'";
  if (!random_) {
    value = value_.size() == 1 ? float_repr(value_[0]) : value_repr(value_floats(value_));
  }
  return "RandomErasing(p=" + float_repr(p_) + ", scale=(" + float_repr(scale_.first) + ", " + float_repr(scale_.second) +
         "), ratio=(" + float_repr(ratio_.first) + ", " + float_repr(ratio_.second) + "), value=" + value +
         ", inplace=" + (inplace_ ? "True" : "False") + ")";
}

ErasingBox RandomErasingTransform::box_draw(int64_t channels, int64_t height, int64_t width, Draws& draws) const {
  ErasingBox box;
  if (draws.uniform(0.0, 1.0) >= p_) return box;  // _RandomApplyTransform's coin
  if (!random_ && value_.size() != 1 && static_cast<int64_t>(value_.size()) != channels)
    throw InputError("RandomErasing(): If value is a sequence, it should have either a single value or " +
                     std::to_string(channels) + " (number of inpt channels)");
  const double area = static_cast<double>(height * width);
  for (int t = 0; t < kEraseTries; ++t) {
    const auto [h, w] = box_sides_draw(draws, area, scale_.first, scale_.second, ratio_.first, ratio_.second);
    if (!(h < height && w < width)) continue;
    box.erase = true;
    box.height = h, box.width = w;
    box.top = draws.below(height - h + 1);
    box.left = draws.below(width - w + 1);
    return box;
  }
  return box;
}

double RandomErasingTransform::value_draw(int64_t channel, Draws& draws) const {
  if (!random_) return value_.size() == 1 ? value_[0] : value_[static_cast<size_t>(channel)];
  // Box-Muller: a standard normal from two uniforms (torch's normal_ as a distribution).
  const double u1 = 1.0 - draws.uniform(0.0, 1.0), u2 = draws.uniform(0.0, 1.0);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

void RandomErasingTransform::apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const {
  (void)scratch;
  const ErasingBox box = box_draw(image.channels, image.height, image.width, draws);
  if (!box.erase) return;
  const int64_t C = image.channels;
  for (int64_t c = 0; c < C; ++c)  // channel-major, as the value tensor [C, h, w] is drawn
    for (int64_t y = box.top; y < box.top + box.height; ++y) {
      uint8_t* row = image.row(y);
      for (int64_t x = box.left; x < box.left + box.width; ++x) row[x * C + c] = byte_of(value_draw(c, draws));
    }
}

TransformDraw RandomErasingTransform::draw(int64_t height, int64_t width, Draws& draws) const {
  const ErasingBox box = box_draw(random_ || value_.size() == 1 ? 3 : static_cast<int64_t>(value_.size()), height, width, draws);
  if (!box.erase) return {{"erase", {0.0}}};
  return {{"erase", {1.0}}, {"i", {static_cast<double>(box.top)}}, {"j", {static_cast<double>(box.left)}},
          {"h", {static_cast<double>(box.height)}}, {"w", {static_cast<double>(box.width)}}};
}

void transforms_register_erasing(TransformRegistry& registry) {
  registry.add("RandomErasing",
               {{"p", value_float(0.5)}, {"scale", value_floats({0.02, 0.33})}, {"ratio", value_floats({0.3, 3.3})},
                {"value", value_float(0.0)}, {"inplace", value_bool(false)}},
               [](const TransformArgs& args) -> TransformPtr {
                 const double p = args.get_double("p");
                 if (!(p >= 0.0 && p <= 1.0))
                   throw InputError("RandomErasing(): `p` should be a floating point value in the interval [0.0, 1.0].");
                 const TransformValue& value = args.get("value");
                 bool random = false;
                 std::vector<double> values;
                 if (value.kind == TransformValue::Kind::kString) {
                   if (value.text != "random") throw InputError("RandomErasing(): If value is str, it should be 'random'");
                   random = true;
                 } else if (value.kind == TransformValue::Kind::kInt || value.kind == TransformValue::Kind::kFloat ||
                            value.kind == TransformValue::Kind::kList) {
                   values = args.get_doubles("value");
                 } else {
                   throw TransformTypeError("RandomErasing(): Argument value should be either a number or str or a sequence");
                 }
                 if (args.get("scale").kind != TransformValue::Kind::kList)
                   throw TransformTypeError("RandomErasing(): Scale should be a sequence");
                 if (args.get("ratio").kind != TransformValue::Kind::kList)
                   throw TransformTypeError("RandomErasing(): Ratio should be a sequence");
                 const auto scale = args.get_doubles("scale"), ratio = args.get_doubles("ratio");
                 if (scale.size() != 2 || ratio.size() != 2)
                   throw InputError("RandomErasing(): scale and ratio should hold two numbers each (min, max)");
                 if (scale[0] < 0 || scale[1] > 1) throw InputError("RandomErasing(): Scale should be between 0 and 1");
                 if (!(ratio[0] > 0 && ratio[0] <= ratio[1]))
                   throw InputError("RandomErasing(): ratio should be (min, max) with 0 < min <= max, got " +
                                    value_repr(args.get("ratio")));
                 return std::make_shared<RandomErasingTransform>(p, std::make_pair(scale[0], scale[1]),
                                                                 std::make_pair(ratio[0], ratio[1]), values, random,
                                                                 args.get_bool("inplace"));
               });
}

} // namespace fastloop
