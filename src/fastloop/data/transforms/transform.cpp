// TransformArgs (a spec's arguments bound to a signature as Python binds a call, with Python's messages),
// the value helpers, and the registry type (registry.h builds the one with every operation).
#include "fastloop/data/transforms/transform.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace fastloop {
namespace {

const char* kind_name(const TransformValue& value) {
  using Kind = TransformValue::Kind;
  switch (value.kind) {
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kList: return "tuple";
    case Kind::kTransforms: return "list of transforms";
    case Kind::kName: return "name";
  }
  return "value";
}

bool is_number(const TransformValue& value) {
  return value.kind == TransformValue::Kind::kInt || value.kind == TransformValue::Kind::kFloat;
}

}  // namespace

TransformSpec::TransformSpec() = default;
TransformSpec::TransformSpec(const TransformSpec& other) = default;
TransformSpec::TransformSpec(TransformSpec&& other) noexcept = default;
TransformSpec& TransformSpec::operator=(const TransformSpec& other) = default;
TransformSpec& TransformSpec::operator=(TransformSpec&& other) noexcept = default;
TransformSpec::~TransformSpec() = default;

TransformValue value_none() { return TransformValue{}; }
TransformValue value_bool(bool value) {
  TransformValue v;
  v.kind = TransformValue::Kind::kBool;
  v.boolean = value;
  return v;
}
TransformValue value_int(int64_t value) {
  TransformValue v;
  v.kind = TransformValue::Kind::kInt;
  v.integer = value;
  v.number = static_cast<double>(value);
  return v;
}
TransformValue value_float(double value) {
  TransformValue v;
  v.kind = TransformValue::Kind::kFloat;
  v.number = value;
  return v;
}
TransformValue value_string(const std::string& text) {
  TransformValue v;
  v.kind = TransformValue::Kind::kString;
  v.text = text;
  return v;
}
TransformValue value_list(std::vector<TransformValue> items) {
  TransformValue v;
  v.kind = TransformValue::Kind::kList;
  v.list = std::move(items);
  return v;
}
TransformValue value_floats(const std::vector<double>& numbers) {
  std::vector<TransformValue> items;
  for (double n : numbers) items.push_back(value_float(n));
  return value_list(std::move(items));
}
TransformValue value_ints(const std::vector<int64_t>& numbers) {
  std::vector<TransformValue> items;
  for (int64_t n : numbers) items.push_back(value_int(n));
  return value_list(std::move(items));
}
TransformParam param_required(const std::string& name) { return TransformParam{name, value_none(), true}; }

const char* interpolation_repr(Interpolation interpolation) {
  switch (interpolation) {
    case Interpolation::kNearest: return "InterpolationMode.NEAREST";
    case Interpolation::kNearestExact: return "InterpolationMode.NEAREST_EXACT";
    case Interpolation::kBilinear: return "InterpolationMode.BILINEAR";
    case Interpolation::kBicubic: return "InterpolationMode.BICUBIC";
  }
  return "InterpolationMode.BILINEAR";
}

// Python's binding: positionals fill the signature in order, then keywords by name; the rest take defaults.
TransformArgs::TransformArgs(const TransformSpec& spec, const std::vector<TransformParam>& signature)
    : name_(spec.name) {
  const std::string call = spec.name + "()";
  if (spec.positional.size() > signature.size()) {
    throw TransformTypeError(call + " takes " + std::to_string(signature.size()) + " positional argument" +
                             (signature.size() == 1 ? "" : "s") + " but " + std::to_string(spec.positional.size()) +
                             (spec.positional.size() == 1 ? " was" : " were") + " given");
  }
  std::vector<const TransformValue*> given(signature.size(), nullptr);
  for (size_t i = 0; i < spec.positional.size(); ++i) given[i] = &spec.positional[i];
  for (const auto& [key, value] : spec.keywords) {
    size_t i = 0;
    while (i < signature.size() && signature[i].name != key) ++i;
    if (i == signature.size())
      throw TransformTypeError(call + " got an unexpected keyword argument '" + key + "'");
    if (given[i] != nullptr) throw TransformTypeError(call + " got multiple values for argument '" + key + "'");
    given[i] = &value;
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < signature.size(); ++i) {
    if (given[i] == nullptr && signature[i].required) missing.push_back("'" + signature[i].name + "'");
    bound_.emplace_back(signature[i].name, given[i] ? *given[i] : signature[i].default_value);
  }
  if (!missing.empty()) {
    std::string names;
    for (size_t i = 0; i < missing.size(); ++i)
      names += (i == 0 ? "" : i + 1 == missing.size() ? (missing.size() > 2 ? ", and " : " and ") : ", ") + missing[i];
    throw TransformTypeError(call + " missing " + std::to_string(missing.size()) + " required positional argument" +
                             (missing.size() == 1 ? "" : "s") + ": " + names);
  }
}

const TransformValue& TransformArgs::get(const std::string& name) const {
  for (const auto& [key, value] : bound_)
    if (key == name) return value;
  throw std::logic_error(name_ + "(): no parameter '" + name + "' in its signature");
}

void TransformArgs::fail_type(const std::string& name, const std::string& what) const {
  throw TransformTypeError(name_ + "(): argument '" + name + "' must be " + what + ", not " +
                           kind_name(get(name)) + " (" + value_repr(get(name)) + ")");
}

bool TransformArgs::is_none(const std::string& name) const { return get(name).kind == TransformValue::Kind::kNone; }

bool TransformArgs::get_bool(const std::string& name) const {
  const auto& value = get(name);
  if (value.kind != TransformValue::Kind::kBool) fail_type(name, "a bool");
  return value.boolean;
}

int64_t TransformArgs::get_int(const std::string& name) const {
  const auto& value = get(name);
  if (value.kind != TransformValue::Kind::kInt) fail_type(name, "an int");
  return value.integer;
}

int64_t TransformArgs::to_int(const std::string& name, double x) const {
  constexpr double kLimit = 2147483648.0;  // 2^31
  if (!(std::fabs(x) < kLimit))
    throw InputError(name_ + "(): " + name + " = " + float_repr(x) + " is out of range; an image side is below 2^31");
  return static_cast<int64_t>(x);
}

double TransformArgs::get_double(const std::string& name) const {
  const auto& value = get(name);
  if (!is_number(value)) fail_type(name, "a number");
  return value.number;
}

std::string TransformArgs::get_string(const std::string& name) const {
  const auto& value = get(name);
  if (value.kind == TransformValue::Kind::kString) return value.text;
  if (value.kind != TransformValue::Kind::kName) fail_type(name, "a str");
  // The enum member's value: InterpolationMode.NEAREST_EXACT -> "nearest-exact", torch.float32 -> "float32".
  std::string member = value.text.substr(value.text.rfind('.') + 1);
  for (char& c : member) c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return member;
}

std::vector<double> TransformArgs::get_doubles(const std::string& name) const {
  const auto& value = get(name);
  if (is_number(value)) return {value.number};
  if (value.kind != TransformValue::Kind::kList) fail_type(name, "a number or a sequence of numbers");
  std::vector<double> out;
  for (const auto& item : value.list) {
    if (!is_number(item)) fail_type(name, "a number or a sequence of numbers");
    out.push_back(item.number);
  }
  return out;
}

std::vector<int64_t> TransformArgs::get_ints(const std::string& name) const {
  const auto& value = get(name);
  if (value.kind == TransformValue::Kind::kInt) return {value.integer};
  if (value.kind != TransformValue::Kind::kList) fail_type(name, "an int or a sequence of ints");
  std::vector<int64_t> out;
  for (const auto& item : value.list) {
    if (item.kind != TransformValue::Kind::kInt) fail_type(name, "an int or a sequence of ints");
    out.push_back(item.integer);
  }
  return out;
}

const std::vector<TransformSpec>& TransformArgs::get_transforms(const std::string& name) const {
  static const std::vector<TransformSpec> kEmpty;
  const auto& value = get(name);
  if (value.kind == TransformValue::Kind::kList && value.list.empty()) return kEmpty;
  if (value.kind != TransformValue::Kind::kTransforms) {
    throw TransformTypeError(name_ + "(): argument '" + name + "' should be a sequence of transforms, not " +
                             kind_name(value) + " (" + value_repr(value) + ")");
  }
  return value.transforms;
}

Interpolation TransformArgs::get_interpolation(const std::string& name) const {
  const auto& value = get(name);
  if (value.kind == TransformValue::Kind::kInt) {
    // torchvision's _interpolation_modes_from_int: Pillow's constants.
    if (value.integer == 0) return Interpolation::kNearest;
    if (value.integer == 2) return Interpolation::kBilinear;
    if (value.integer == 3) return Interpolation::kBicubic;
  } else if (value.kind == TransformValue::Kind::kString || value.kind == TransformValue::Kind::kName) {
    const std::string mode = get_string(name);
    if (mode == "nearest") return Interpolation::kNearest;
    if (mode == "nearest-exact") return Interpolation::kNearestExact;
    if (mode == "bilinear") return Interpolation::kBilinear;
    if (mode == "bicubic") return Interpolation::kBicubic;
  } else {
    throw InputError(name_ + "(): argument " + name + " should be an `InterpolationMode` or a corresponding Pillow "
                     "integer constant, but got " + value_repr(value) + ".");
  }
  throw TransformTypeError(name_ + "(): " + name + "=" + value_repr(value) + " is not supported on uint8 images; "
                           "supported: InterpolationMode.NEAREST, NEAREST_EXACT, BILINEAR, BICUBIC");
}

void TransformRegistry::add(const std::string& name, std::vector<TransformParam> signature, TransformFactory factory) {
  for (const auto& entry : entries_)
    if (entry.name == name) throw std::logic_error("transform " + name + " registered twice");
  entries_.push_back(Entry{name, std::move(signature), std::move(factory)});
}

TransformPtr TransformRegistry::make(const TransformSpec& spec) const {
  for (const auto& entry : entries_)
    if (entry.name == spec.name) return entry.factory(TransformArgs(spec, entry.signature));
  std::string supported;
  for (const auto& name : names()) supported += (supported.empty() ? "" : ", ") + name;
  throw TransformTypeError("transform " + spec.name + " is not supported by fastloop's pipeline; supported: " +
                           supported);
}

const std::vector<TransformParam>& TransformRegistry::signature(const std::string& name) const {
  for (const auto& entry : entries_)
    if (entry.name == name) return entry.signature;
  throw TransformTypeError("transform " + name + " is not supported by fastloop's pipeline");
}

std::vector<std::string> TransformRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& entry : entries_) out.push_back(entry.name);
  std::sort(out.begin(), out.end());
  return out;
}
std::string float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  // The shortest round-trip digits in scientific form, then Python's choice of fixed or exponent form.
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  std::string sci(buffer, result.ptr);
  const size_t e = sci.find('e');
  const int exponent = std::atoi(sci.c_str() + e + 1);
  std::string mantissa = sci.substr(0, e);
  const bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits += c;
  std::string out;
  if (exponent < -4 || exponent >= 16) {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out.append(1, '.').append(digits, 1, std::string::npos);
    char exp_text[16];  // "e-" and up to 10 digits of an int
    std::snprintf(exp_text, sizeof(exp_text), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += exp_text;
  } else if (exponent < 0) {
    out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  } else {
    const size_t point = static_cast<size_t>(exponent) + 1;
    if (digits.size() <= point) {
      out = digits + std::string(point - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, point) + "." + digits.substr(point);
    }
  }
  return negative ? "-" + out : out;
}

std::string value_repr(const TransformValue& value) {
  using Kind = TransformValue::Kind;
  switch (value.kind) {
    case Kind::kNone: return "None";
    case Kind::kBool: return value.boolean ? "True" : "False";
    case Kind::kInt: return std::to_string(value.integer);
    case Kind::kFloat: return float_repr(value.number);
    case Kind::kName: return value.text;
    case Kind::kString: {
      std::string out = "'";
      for (char c : value.text) {
        if (c == '\'' || c == '\\') out += '\\';
        out += c;
      }
      return out + "'";
    }
    case Kind::kList: {
      std::string out = "(";
      for (size_t i = 0; i < value.list.size(); ++i) out += (i ? ", " : "") + value_repr(value.list[i]);
      return out + (value.list.size() == 1 ? ",)" : ")");
    }
    case Kind::kTransforms: {
      std::string out = "[";
      for (size_t i = 0; i < value.transforms.size(); ++i) out += (i ? ", " : "") + spec_to_string(value.transforms[i]);
      return out + "]";
    }
  }
  return "None";
}

std::string spec_to_string(const TransformSpec& spec) {
  std::string out = spec.name + "(";
  bool first = true;
  for (const auto& value : spec.positional) {
    out += (first ? "" : ", ") + value_repr(value);
    first = false;
  }
  for (const auto& [key, value] : spec.keywords) {
    out += (first ? "" : ", ") + key + "=" + value_repr(value);
    first = false;
  }
  return out + ")";
}

std::string spec_to_string(const std::vector<TransformSpec>& specs) {
  std::string out;
  for (size_t i = 0; i < specs.size(); ++i) out += (i ? ", " : "") + spec_to_string(specs[i]);
  return out;
}

bool value_equal(const TransformValue& a, const TransformValue& b) {
  using Kind = TransformValue::Kind;
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::kNone: return true;
    case Kind::kBool: return a.boolean == b.boolean;
    case Kind::kInt: return a.integer == b.integer;
    case Kind::kFloat: return a.number == b.number;
    case Kind::kString:
    case Kind::kName: return a.text == b.text;
    case Kind::kList:
      if (a.list.size() != b.list.size()) return false;
      for (size_t i = 0; i < a.list.size(); ++i)
        if (!value_equal(a.list[i], b.list[i])) return false;
      return true;
    case Kind::kTransforms:
      if (a.transforms.size() != b.transforms.size()) return false;
      for (size_t i = 0; i < a.transforms.size(); ++i)
        if (!spec_equal(a.transforms[i], b.transforms[i])) return false;
      return true;
  }
  return false;
}

bool spec_equal(const TransformSpec& a, const TransformSpec& b) {
  if (a.name != b.name || a.positional.size() != b.positional.size() || a.keywords.size() != b.keywords.size())
    return false;
  for (size_t i = 0; i < a.positional.size(); ++i)
    if (!value_equal(a.positional[i], b.positional[i])) return false;
  for (size_t i = 0; i < a.keywords.size(); ++i)
    if (a.keywords[i].first != b.keywords[i].first || !value_equal(a.keywords[i].second, b.keywords[i].second))
      return false;
  return true;
}

} // namespace fastloop
