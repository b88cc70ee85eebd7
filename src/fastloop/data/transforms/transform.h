// A transform of the user's pipeline as fastloop's workers run it: torchvision.transforms.v2's split of a
// class (its constructor's checks, make_params' random draws) over a functional kernel on uint8 images
// (functional/*.h here). A pipeline is compiled once per Loader from TransformSpecs (spec.h: parsed from
// "RandomResizedCrop(224, scale=(0.35, 1)), ..." or read from torchvision objects by the Python package)
// through the registry below, where each operation's file adds its classes with torchvision's signature.
#pragma once

#include "fastloop/core/errors.h"
#include "fastloop/data/transforms/draws.h"
#include "fastloop/data/transforms/image_u8.h"
#include "fastloop/data/transforms/targets.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fastloop {

/// An argument that is not torchvision's (an unknown keyword, a wrong type): Python's TypeError. Values out of
/// torchvision's range are InputError (Python's ValueError), with torchvision's message.
class TransformTypeError : public InputError {
 public:
  using InputError::InputError;
};

struct TransformSpec;

/// torchvision's InterpolationMode for uint8 tensors (v2 accepts the enum or its value: "bilinear", ...).
enum class Interpolation { kNearest, kNearestExact, kBilinear, kBicubic };

/// "InterpolationMode.BILINEAR": torchvision's repr of the mode.
const char* interpolation_repr(Interpolation interpolation);

/// One argument as torchvision's constructors take it: None, a bool, an int, a float, a str, a sequence
/// (tuple or list) of values, a list of transforms (Compose's, RandomApply's, ...), or a name as written in
/// Python (kName: InterpolationMode.BILINEAR, AutoAugmentPolicy.CIFAR10, torch.float32; `text` holds it as
/// written, and get_string() gives the enum's value: "bilinear", "cifar10", "float32").
struct TransformValue {
  enum class Kind { kNone, kBool, kInt, kFloat, kString, kList, kTransforms, kName };
  Kind kind = Kind::kNone;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0.0;  // kFloat, and kInt's value as a double
  std::string text;
  std::vector<TransformValue> list;
  std::vector<TransformSpec> transforms;
};

/// A transform as written: torchvision's class name and its arguments, positional then by keyword.
struct TransformSpec {
  // Declared here, defined in transform.cpp: TransformValue and TransformSpec hold each other, and clang with
  // libstdc++ in C++20 would otherwise instantiate ~TransformSpec inside std::pair<std::string,
  // TransformValue>'s own instantiation (an incomplete-type error).
  TransformSpec();
  TransformSpec(const TransformSpec& other);
  TransformSpec(TransformSpec&& other) noexcept;
  TransformSpec& operator=(const TransformSpec& other);
  TransformSpec& operator=(TransformSpec&& other) noexcept;
  ~TransformSpec();

  std::string name;
  std::vector<TransformValue> positional;
  std::vector<std::pair<std::string, TransformValue>> keywords;
};

/// One parameter of a constructor's signature, in torchvision's order, with its default.
struct TransformParam {
  std::string name;
  TransformValue default_value;
  bool required = false;  // no default: a call without it is a TypeError, as Python's
};

/// Values and parameters as signatures spell them: {"p", value_float(0.5)}, param_required("size").
TransformValue value_none();
TransformValue value_bool(bool value);
TransformValue value_int(int64_t value);
TransformValue value_float(double value);
TransformValue value_string(const std::string& text);
TransformValue value_list(std::vector<TransformValue> items);
TransformValue value_floats(const std::vector<double>& numbers);  // a tuple of floats
TransformValue value_ints(const std::vector<int64_t>& numbers);   // a tuple of ints
TransformParam param_required(const std::string& name);

/// A spec's arguments bound to a signature, as Python binds a call: too many positionals, an unknown or a
/// repeated keyword throw TransformTypeError ("RandomCrop() got an unexpected keyword argument 'x'").
/// Typed getters throw TransformTypeError for a value of the wrong type, naming the transform and argument.
class TransformArgs {
 public:
  TransformArgs(const TransformSpec& spec, const std::vector<TransformParam>& signature);
  const std::string& transform() const { return name_; }
  const TransformValue& get(const std::string& name) const;
  bool is_none(const std::string& name) const;
  bool get_bool(const std::string& name) const;
  int64_t get_int(const std::string& name) const;
  /// Python's int(x) of a number given as `name` (or one of its items): truncation toward zero; NaN, an
  /// infinity or an integer part beyond 2^31 (no image side is that long) throws InputError naming it.
  int64_t to_int(const std::string& name, double x) const;
  double get_double(const std::string& name) const;  // an int or a float
  std::string get_string(const std::string& name) const;  // a str, or a kName's value (see TransformValue)
  std::vector<double> get_doubles(const std::string& name) const;  // a number alone is a sequence of one
  std::vector<int64_t> get_ints(const std::string& name) const;     // a number alone is a sequence of one
  const std::vector<TransformSpec>& get_transforms(const std::string& name) const;
  /// InterpolationMode.BILINEAR (as parsed), "bilinear", or torchvision's int codes (0 nearest, 2 bilinear,
  /// 3 bicubic); anything else throws InputError with torchvision's message.
  Interpolation get_interpolation(const std::string& name) const;
  /// A TransformTypeError "<transform>(): argument '<name>' must be <what>, not <kind>" for this argument.
  [[noreturn]] void fail_type(const std::string& name, const std::string& what) const;

 private:
  std::string name_;
  std::vector<std::pair<std::string, TransformValue>> bound_;
};

/// A transform's parameters as torchvision's make_params returns them (name -> numbers), for the
/// distribution tests against torchvision's own sampling.
using TransformDraw = std::vector<std::pair<std::string, std::vector<double>>>;

/// An image's side lengths in pixels; {0, 0} stands for a size not known before the image is seen (the
/// data's own, or one that depends on the image or on the draws).
struct ImageSize {
  int64_t height = 0, width = 0;
  bool known() const { return height > 0 && width > 0; }
  bool operator==(const ImageSize& other) const { return height == other.height && width == other.width; }
  bool operator!=(const ImageSize& other) const { return !(*this == other); }
};

/// A compiled transform. apply() runs on a worker thread with that worker's image, draws and scratch; it
/// must not allocate once the worker's buffers have grown, and is const (one instance serves all workers).
class Transform {
 public:
  virtual ~Transform() = default;
  /// torchvision's spelling with every argument, as its __repr__: "RandomHorizontalFlip(p=0.5)".
  virtual std::string repr() const = 0;
  /// Transforms `image` in place (kernels that cannot swap their result in from scratch.spare).
  virtual void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const = 0;
  /// What apply() would draw for a height x width image from `draws` (apply() draws through the same code);
  /// transforms without random parameters return {}.
  virtual TransformDraw draw(int64_t height, int64_t width, Draws& draws) const {
    (void)height, (void)width, (void)draws;
    return {};
  }
  /// The size apply() makes of an image of size `in` ({0, 0}: unknown), when it is the same for every image
  /// and draw; {0, 0} otherwise. The default keeps the size: transforms that change it say how.
  virtual ImageSize output_size(ImageSize in) const { return in; }
  /// How apply_targets() treats a sample's boxes and masks (targets.h). The default: it cannot, and a
  /// pipeline over samples with targets refuses the transform (TypeError).
  virtual TargetSupport target_support() const { return TargetSupport::kNone; }
  /// Whether apply() reads or writes pixels. Transforms of targets alone (a box format, sanitize, clamp) and
  /// no-ops (Identity, ToPureTensor) do not: they run wherever they stand, after the conversion to float too.
  virtual bool touches_pixels() const { return true; }
  /// The transform on an image and its targets, with exactly apply()'s draws. The default, right for kPixels
  /// transforms: apply() on the image, the targets untouched.
  virtual void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const {
    (void)targets;
    apply(image, draws, scratch);
  }
};
using TransformPtr = std::shared_ptr<const Transform>;

using TransformFactory = std::function<TransformPtr(const TransformArgs&)>;

/// The operations by torchvision class name: each op file has a `transforms_register_<family>(registry)`
/// (families.h) that transform_registry() (registry.h) calls once.
class TransformRegistry {
 public:
  void add(const std::string& name, std::vector<TransformParam> signature, TransformFactory factory);
  /// Binds and builds `spec`; an unknown name throws TransformTypeError listing every supported name.
  TransformPtr make(const TransformSpec& spec) const;
  std::vector<std::string> names() const;  // sorted
  /// The signature `name` was registered with (TransformTypeError for a name it does not hold).
  const std::vector<TransformParam>& signature(const std::string& name) const;

 private:
  struct Entry {
    std::string name;
    std::vector<TransformParam> signature;
    TransformFactory factory;
  };
  std::vector<Entry> entries_;
};

/// Writing values and specs back as Python would, and comparing them as written.
/// The canonical spelling: "Name(positional, ..., keyword=value, ...)" joined by ", "; sequences as tuples,
/// floats as Python's repr, strings in single quotes. spec_parse(spec_to_string(x)) == x.
std::string spec_to_string(const std::vector<TransformSpec>& specs);
std::string spec_to_string(const TransformSpec& spec);

/// A value as Python's repr writes it (tuples for sequences): "(0.35, 1)", "'random'", "None".
std::string value_repr(const TransformValue& value);

/// Python's repr of a float: the shortest digits that read back the same, "1.0", "0.1", "1e-05".
std::string float_repr(double value);

/// Whether two values / specs are the same as written (the round-trip tests' equality).
bool value_equal(const TransformValue& a, const TransformValue& b);
bool spec_equal(const TransformSpec& a, const TransformSpec& b);

} // namespace fastloop
