// TransformArgs (a spec's arguments bound to a signature as Python binds a call, with Python's messages),
// the value helpers, and the registry of every operation, built once from families.h's functions.
#include "fastloop/data/transforms/transform.h"

#include "fastloop/data/transforms/families.h"
#include "fastloop/data/transforms/spec.h"

#include <algorithm>
#include <cctype>

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

std::vector<std::string> TransformRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& entry : entries_) out.push_back(entry.name);
  std::sort(out.begin(), out.end());
  return out;
}

const TransformRegistry& transform_registry() {
  // A function-local static: C++11 makes its construction thread-safe, and it is built on first use.
  static const TransformRegistry registry = [] {
    TransformRegistry built;
    transforms_register_containers(built);
    transforms_register_conversions(built);
    transforms_register_resize(built);
    transforms_register_erasing(built);
    transforms_register_geometry(built);
    transforms_register_color(built);
    transforms_register_auto(built);
    return built;
  }();
  return registry;
}

} // namespace fastloop
