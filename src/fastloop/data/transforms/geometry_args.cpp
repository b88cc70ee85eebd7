// The argument rules of torchvision/transforms/transforms.py (_setup_size, _setup_angle,
// _check_sequence_input) and v2/_utils.py (_check_padding_arg, _setup_fill_arg), restated over
// TransformArgs with the same messages: ValueError -> InputError, TypeError -> TransformTypeError.
#include "fastloop/data/transforms/geometry_args.h"

#include "fastloop/data/transforms/spec.h"

#include <cmath>

namespace fastloop {
namespace {

bool geo_is_number(const TransformValue& v) {
  return v.kind == TransformValue::Kind::kInt || v.kind == TransformValue::Kind::kFloat;
}

// "2 or 4" / "2", as _check_sequence_input words it.
std::string geo_sizes_text(const std::vector<size_t>& sizes) {
  std::string text;
  for (size_t i = 0; i < sizes.size(); ++i) text += (i ? " or " : "") + std::to_string(sizes[i]);
  return text;
}

std::vector<double> geo_numbers_of(const TransformArgs& args, const std::string& name, const TransformValue& v) {
  std::vector<double> numbers;
  for (const auto& item : v.list) {
    if (!geo_is_number(item)) {
      throw TransformTypeError(args.transform() + "(): " + name + " should be a sequence of numbers, got " +
                               value_repr(v));
    }
    numbers.push_back(item.number);
  }
  return numbers;
}

}  // namespace

std::string geo_repr(const TransformArgs& args, const std::vector<std::string>& names) {
  std::string text = args.transform() + "(";
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    text += (i ? ", " : "") + name + "=" +
            (name == "interpolation" ? std::string(interpolation_repr(args.get_interpolation(name)))
                                     : value_repr(args.get(name)));
  }
  return text + ")";
}

Interpolation geo_interpolation(const TransformArgs& args, const std::string& name, bool warp) {
  const Interpolation mode = args.get_interpolation(name);
  if (warp && mode != Interpolation::kNearest && mode != Interpolation::kBilinear) {
    throw InputError(std::string("Interpolation mode '") +
                     (mode == Interpolation::kBicubic ? "bicubic" : "nearest-exact") +
                     "' is unsupported with Tensor input (" + args.transform() + ": use nearest or bilinear)");
  }
  return mode;
}

std::vector<double> geo_angle(const TransformArgs& args, const std::string& name, std::vector<size_t> sizes) {
  const TransformValue& v = args.get(name);
  if (geo_is_number(v)) {
    if (v.number < 0) throw InputError("If " + name + " is a single number, it must be positive.");
    return {-v.number, v.number};
  }
  const std::string message = name + " should be a sequence of length " + geo_sizes_text(sizes) + ".";
  if (v.kind != TransformValue::Kind::kList) throw TransformTypeError(message);
  bool fits = false;
  for (size_t s : sizes) fits = fits || v.list.size() == s;
  if (!fits) throw InputError(message);
  return geo_numbers_of(args, name, v);
}

std::optional<std::vector<double>> geo_sequence(const TransformArgs& args, const std::string& name, size_t length) {
  const TransformValue& v = args.get(name);
  if (v.kind == TransformValue::Kind::kNone) return std::nullopt;
  const std::string message = name + " should be a sequence of length " + std::to_string(length) + ".";
  if (v.kind != TransformValue::Kind::kList) throw TransformTypeError(message);
  if (v.list.size() != length) throw InputError(message);
  return geo_numbers_of(args, name, v);
}

std::array<int64_t, 2> geo_size(const TransformArgs& args, const std::string& name, const std::string& message) {
  const TransformValue& v = args.get(name);
  if (geo_is_number(v)) {
    const int64_t n = args.to_int(name, v.number);  // int(size)
    return {n, n};
  }
  if (v.kind != TransformValue::Kind::kList || (v.list.size() != 1 && v.list.size() != 2)) throw InputError(message);
  const std::vector<double> n = geo_numbers_of(args, name, v);
  for (double x : n) {
    if (x != std::floor(x))
      throw TransformTypeError(args.transform() + "(): " + name + " should hold integers, got " + value_repr(v));
  }
  return {args.to_int(name, n[0]), args.to_int(name, n.size() == 1 ? n[0] : n[1])};
}

Padding geo_padding(const TransformArgs& args, const std::string& name) {
  const TransformValue& v = args.get(name);
  const std::string message =
      "Padding must be an int or a 1, 2, or 4 element of tuple or list, got " + value_repr(v) + ".";
  std::vector<int64_t> p;
  if (v.kind == TransformValue::Kind::kInt) {
    p = {v.integer};
  } else if (v.kind == TransformValue::Kind::kList) {
    for (const auto& item : v.list) {
      if (item.kind != TransformValue::Kind::kInt) throw InputError(message);
      p.push_back(item.integer);
    }
  }
  for (int64_t side : p) args.to_int(name, static_cast<double>(side));  // refuses padding past 2^31
  if (p.size() == 1) return {p[0], p[0], p[0], p[0]};
  if (p.size() == 2) return {p[0], p[1], p[0], p[1]};  // left/right, top/bottom
  if (p.size() == 4) return {p[0], p[1], p[2], p[3]};
  throw InputError(message);
}

namespace {

// A dict of fills, as pairs (type name, fill).
bool geo_is_fill_dict(const TransformValue& v) {
  if (v.kind != TransformValue::Kind::kList || v.list.empty()) return false;
  for (const auto& item : v.list) {
    if (item.kind != TransformValue::Kind::kList || item.list.size() != 2 ||
        item.list[0].kind != TransformValue::Kind::kString)
      return false;
  }
  return true;
}

std::optional<std::vector<double>> geo_fill_values(const TransformArgs& args, const TransformValue& v,
                                                   const TransformValue& whole) {
  if (v.kind == TransformValue::Kind::kNone) return std::nullopt;
  if (geo_is_number(v)) return std::vector<double>{v.number};
  if (v.kind == TransformValue::Kind::kList) {
    std::vector<double> values;
    for (const auto& item : v.list) {
      if (!geo_is_number(item)) {
        throw TransformTypeError(args.transform() + "(): fill=" + value_repr(whole) + " holds a non-number");
      }
      values.push_back(item.number);
    }
    return values;
  }
  throw TransformTypeError("Got inappropriate fill arg, only Numbers, tuples, lists and dicts are allowed. (" +
                           args.transform() + ": fill=" + value_repr(whole) + ")");
}

}  // namespace

std::optional<std::vector<double>> geo_fill(const TransformArgs& args, const std::string& name, const std::string& type) {
  const TransformValue& v = args.get(name);
  if (!geo_is_fill_dict(v)) return geo_fill_values(args, v, v);
  const TransformValue* others = nullptr;
  for (const auto& item : v.list) {
    if (item.list[0].text == type) return geo_fill_values(args, item.list[1], v);
    if (item.list[0].text == "others") others = &item.list[1];
  }
  return others ? geo_fill_values(args, *others, v) : std::nullopt;
}

double geo_probability(const TransformArgs& args, const std::string& name) {
  const double p = args.get_double(name);
  if (!(p >= 0.0 && p <= 1.0)) throw InputError("`p` should be a floating point value in the interval [0.0, 1.0].");
  return p;
}

}  // namespace fastloop
