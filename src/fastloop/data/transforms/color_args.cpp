// Shared pieces of the colour and auto-augment transforms (color_args.h).
#include "fastloop/data/transforms/color_args.h"

#include <cmath>
#include <utility>

namespace fastloop {

float torch_rand(Draws& draws) {
  return static_cast<float>(draws.next() >> 40) * 0x1.0p-24f;
}

double torch_uniform(Draws& draws, double lo, double hi) {
  const float u = torch_rand(draws);
  return static_cast<float>(u * (static_cast<float>(hi) - static_cast<float>(lo)) + static_cast<float>(lo));
}

void torch_randperm(Draws& draws, int64_t n, int64_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = i;
  for (int64_t i = 0; i + 1 < n; ++i) std::swap(out[i], out[i + draws.below(n - i)]);
}

double gamma_draw(Draws& draws, double alpha) {
  // Marsaglia & Tsang (2000); for alpha < 1, Gamma(alpha + 1) * U^(1 / alpha).
  double boost = 1.0;
  if (alpha < 1.0) {
    boost = std::pow(1.0 - draws.uniform(0.0, 1.0), 1.0 / alpha);
    alpha += 1.0;
  }
  const double d = alpha - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      // A standard normal from two uniforms (Box-Muller).
      const double u1 = 1.0 - draws.uniform(0.0, 1.0), u2 = draws.uniform(0.0, 1.0);
      x = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = 1.0 - draws.uniform(0.0, 1.0);
    if (u < 1.0 - 0.0331 * x * x * x * x || std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v)))
      return d * v * boost;
  }
}

double random_apply_p(const TransformArgs& args) {
  const double p = args.get_double("p");
  if (!(p >= 0.0 && p <= 1.0)) throw InputError("`p` should be a floating point value in the interval [0.0, 1.0].");
  return p;
}

Interpolation affine_interpolation(const TransformArgs& args) {
  const Interpolation mode = args.get_interpolation("interpolation");
  if (mode != Interpolation::kNearest && mode != Interpolation::kBilinear) {
    const std::string name = mode == Interpolation::kBicubic ? "bicubic" : "nearest-exact";
    throw InputError("Interpolation mode '" + name + "' is unsupported with Tensor input (" + args.transform() +
                     "'s shear, translate and rotate take InterpolationMode.NEAREST or BILINEAR)");
  }
  return mode;
}

std::optional<std::vector<double>> fill_values(const TransformArgs& args) {
  const TransformValue& value = args.get("fill");
  if (value.kind == TransformValue::Kind::kNone) return std::nullopt;
  if (value.kind == TransformValue::Kind::kInt || value.kind == TransformValue::Kind::kFloat) return std::vector<double>{value.number};
  if (value.kind == TransformValue::Kind::kList) return args.get_doubles("fill");
  throw TransformTypeError("Got inappropriate fill arg, only Numbers, tuples, lists and dicts are allowed.");
}

} // namespace fastloop
