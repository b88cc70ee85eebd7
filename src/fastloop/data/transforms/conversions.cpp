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

// torch.int64 / 'int64' / None as a dict's value: the dtype's name without "torch.", nullopt for None.
std::optional<std::string> dtype_name(const TransformArgs& args, const TransformValue& value) {
  if (value.kind == TransformValue::Kind::kNone) return std::nullopt;
  if (value.kind != TransformValue::Kind::kName && value.kind != TransformValue::Kind::kString)
    throw TransformTypeError(args.transform() + "(): a dict of dtypes takes torch dtypes or None, got " + value_repr(value));
  const std::string& text = value.text;
  return text.rfind("torch.", 0) == 0 ? text.substr(6) : text;
}

// ToDtype's dict of dtypes per tv_tensor type, as the Python package spells it: (('Image', torch.float32),
// ('Mask', torch.int64), ('others', None)). Each type takes its own entry, else "others"'s; the image is an
// Image (a plain tensor where no Image is given: 'Tensor'). torchvision raises on the first sample for an
// image the dict does not cover: here when compiled.
TransformPtr dtype_dict_make(const TransformArgs& args) {
  const TransformValue& dict = args.get("dtype");
  std::optional<std::optional<std::string>> image, tensor, mask, boxes, others;
  for (const auto& item : dict.list) {
    if (item.kind != TransformValue::Kind::kList || item.list.size() != 2 || item.list[0].kind != TransformValue::Kind::kString)
      throw InputError("ToDtype(): dtype must be a dict or a torch.dtype, got " + value_repr(dict) + " instead");
    const std::string& type = item.list[0].text;
    auto& slot = type == "Image" || type == "Video" ? image : type == "Tensor" ? tensor : type == "Mask" ? mask
                 : type == "BoundingBoxes" ? boxes : type == "others" ? others : image;
    if (&slot == &image && type != "Image" && type != "Video")
      throw TransformTypeError("ToDtype(): a dtype for " + type + " is not supported; fastloop's samples hold Image, "
                               "Mask and BoundingBoxes ('others' for the rest)");
    slot = dtype_name(args, item.list[1]);
  }
  const auto pick = [&](const auto& own) { return own ? own : others; };
  const auto image_dtype = image ? image : pick(tensor);
  if (!image_dtype)
    throw InputError("ToDtype(): No dtype was specified for type <class 'torchvision.tv_tensors._image.Image'>. If you "
                     "only need to convert the dtype of images or videos, you can just pass e.g. dtype=torch.float32. If "
                     "you're passing a dict as dtype, you can use \"others\" as a catch-all key e.g. dtype={tv_tensors.Mask: "
                     "torch.int64, \"others\": None} to pass-through the rest of the inputs.");
  StageDtype stage = StageDtype::kUInt8;
  if (*image_dtype) {
    TransformSpec one;
    one.name = "ToDtype";
    TransformValue name;
    name.kind = TransformValue::Kind::kName;
    name.text = "torch." + **image_dtype;
    one.positional.push_back(name);
    stage = dtype_of(TransformArgs(one, {param_required("dtype")}), "dtype");
  }
  const auto target = [&](const auto& own) -> std::optional<std::string> {
    const auto chosen = pick(own);
    return !chosen ? std::optional<std::string>("missing") : *chosen;
  };
  return std::make_shared<ConvertTransform>(stage, args.get_bool("scale"), target(mask), target(boxes), value_repr(dict));
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
  if (!dict_repr_.empty()) return "ToDtype(dtype=" + dict_repr_ + ", scale=" + (scale_ ? "True" : "False") + ")";
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
                 if (args.get("dtype").kind == TransformValue::Kind::kList) return dtype_dict_make(args);
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
