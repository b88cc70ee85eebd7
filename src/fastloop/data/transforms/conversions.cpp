// The conversions (ToTensor, PILToTensor, ToImage, ToDtype, ConvertImageDtype) and Normalize with
// transforms.v2's signatures and checks (output_stage.h); their arithmetic is the pipeline's value table.
#include "fastloop/data/transforms/output_stage.h"

#include "fastloop/data/transforms/families.h"
#include "fastloop/data/transforms/spec.h"

namespace fastloop {
namespace {

// torch.float32 / torch.float / 'float32' ... as the dtype of ToDtype and ConvertImageDtype.
StageDtype dtype_of(const TransformArgs& args, const std::string& name) {
  const TransformValue& value = args.get(name);
  if (value.kind != TransformValue::Kind::kName && value.kind != TransformValue::Kind::kString)
    throw InputError(args.transform() + "(): dtype must be a dict or a torch.dtype, got " + value_repr(value) + " instead");
  const std::string dtype = args.get_string(name);
  if (dtype == "float32" || dtype == "float") return StageDtype::kFloat32;
  if (dtype == "float16" || dtype == "half") return StageDtype::kFloat16;
  if (dtype == "bfloat16") return StageDtype::kBFloat16;
  if (dtype == "float64" || dtype == "double") return StageDtype::kFloat64;
  if (dtype == "uint8") return StageDtype::kUInt8;
  throw TransformTypeError(args.transform() + "(): dtype " + value_repr(value) + " is not supported; supported: "
                           "torch.uint8, torch.float32, torch.float16, torch.bfloat16, torch.float64");
}

}  // namespace

const char* stage_dtype_repr(StageDtype dtype) {
  switch (dtype) {
    case StageDtype::kUInt8: return "torch.uint8";
    case StageDtype::kFloat32: return "torch.float32";
    case StageDtype::kFloat16: return "torch.float16";
    case StageDtype::kBFloat16: return "torch.bfloat16";
    case StageDtype::kFloat64: return "torch.float64";
  }
  return "torch.float32";
}

std::string ConvertTransform::repr() const {
  if (name_ == "ToDtype") return "ToDtype(" + std::string(stage_dtype_repr(dtype_)) + ", scale=" + (scale_ ? "True" : "False") + ")";
  if (name_ == "ConvertImageDtype") return "ConvertImageDtype(" + std::string(stage_dtype_repr(dtype_)) + ")";
  return name_ + "()";
}

std::string NormalizeTransform::repr() const {
  std::vector<TransformValue> mean, std;
  for (double m : mean_) mean.push_back(value_float(m));
  for (double s : std_) std.push_back(value_float(s));
  return "Normalize(mean=" + value_repr(value_list(mean)) + ", std=" + value_repr(value_list(std)) +
         ", inplace=" + (inplace_ ? "True" : "False") + ")";
}

void NormalizeTransform::apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const {
  (void)image, (void)draws, (void)scratch;
  throw TransformTypeError("Normalize(): Input tensor should be a float tensor. Got torch.uint8.");
}

void transforms_register_conversions(TransformRegistry& registry) {
  registry.add("ToTensor", {}, [](const TransformArgs&) -> TransformPtr {
    return std::make_shared<ConvertTransform>("ToTensor", StageDtype::kFloat32, true, true);
  });
  registry.add("PILToTensor", {}, [](const TransformArgs&) -> TransformPtr {
    return std::make_shared<ConvertTransform>("PILToTensor", StageDtype::kUInt8, false, false);
  });
  registry.add("ToImage", {}, [](const TransformArgs&) -> TransformPtr {
    return std::make_shared<ConvertTransform>("ToImage", StageDtype::kUInt8, false, false);
  });
  registry.add("ToDtype", {param_required("dtype"), {"scale", value_bool(false)}},
               [](const TransformArgs& args) -> TransformPtr {
                 return std::make_shared<ConvertTransform>("ToDtype", dtype_of(args, "dtype"), args.get_bool("scale"), false);
               });
  registry.add("ConvertImageDtype", {{"dtype", [] {
                                        TransformValue v;
                                        v.kind = TransformValue::Kind::kName;
                                        v.text = "torch.float32";
                                        return v;
                                      }()}},
               [](const TransformArgs& args) -> TransformPtr {
                 return std::make_shared<ConvertTransform>("ConvertImageDtype", dtype_of(args, "dtype"), true, false);
               });
  registry.add("Normalize", {param_required("mean"), param_required("std"), {"inplace", value_bool(false)}},
               [](const TransformArgs& args) -> TransformPtr {
                 std::vector<double> mean = args.get_doubles("mean"), std = args.get_doubles("std");
                 for (double s : std)
                   if (s == 0.0) throw InputError("Normalize(): std evaluated to zero, leading to division by zero.");
                 if (mean.empty() || std.empty()) throw InputError("Normalize(): mean and std need at least one value");
                 return std::make_shared<NormalizeTransform>(std::move(mean), std::move(std), args.get_bool("inplace"));
               });
}

} // namespace fastloop
