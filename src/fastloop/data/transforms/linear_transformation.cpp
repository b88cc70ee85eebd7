// LinearTransformation as transforms.v2 defines it (whitening: ZCA on CIFAR and the like): the float image
// flattened to [1, D] (D = C * H * W), mean_vector subtracted, multiplied by the [D, D] transformation_matrix
// (torch.mm, with the matrix cast to the image's dtype), reshaped back. Its tensors come as a safetensors file
// (a path: the tensor named as the argument, or the file's only tensor; the Python package writes the
// transform's own tensors to one, fastloop.transforms) or, for small matrices, as nested lists of numbers.
// It runs on float images only (after ToDtype / ToTensor): torchvision's result on a uint8 image is the one
// after ToDtype(torch.float32, scale=False), which the refusal suggests.
#include "fastloop/data/transforms/families.h"
#include "fastloop/data/transforms/float_step.h"
#include "fastloop/io/safetensors.h"
#include "fastloop/io/safetensors_tensors.h"

#include <memory>
#include <sstream>

namespace fastloop {
namespace {

// "float32": torch's name of a floating-point dtype, as its repr prints it after "torch.".
std::string dtype_name(at::ScalarType type) {
  switch (type) {
    case at::kDouble: return "float64";
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    case at::kFloat: return "float32";
    default: return c10::toString(type);
  }
}

// "(3, 3)": a shape as Python prints torch.Size's tuple.
std::string shape_repr(const at::Tensor& t) {
  std::ostringstream out;
  out << "(";
  for (int64_t d = 0; d < t.dim(); ++d) out << (d ? ", " : "") << t.size(d);
  out << (t.dim() == 1 ? ",)" : ")");
  return out.str();
}

// A list of numbers (or of lists of numbers) as a float32 tensor, as torch.tensor makes one of Python floats.
at::Tensor tensor_of_list(const TransformArgs& args, const std::string& name, const TransformValue& value) {
  std::vector<int64_t> shape{static_cast<int64_t>(value.list.size())};
  std::vector<float> numbers;
  for (const TransformValue& item : value.list) {
    const bool row = item.kind == TransformValue::Kind::kList;
    if (row && shape.size() == 1) shape.push_back(static_cast<int64_t>(item.list.size()));
    if (row != (shape.size() == 2) || (row && static_cast<int64_t>(item.list.size()) != shape[1]))
      args.fail_type(name, "a tensor, a safetensors file or a list of numbers or of equal rows");
    for (const TransformValue& v : row ? item.list : std::vector<TransformValue>{item}) {
      if (v.kind != TransformValue::Kind::kInt && v.kind != TransformValue::Kind::kFloat)
        args.fail_type(name, "a list of numbers");
      numbers.push_back(static_cast<float>(v.number));
    }
  }
  return at::tensor(numbers, at::kFloat).reshape(shape);
}

// The argument `name`: a safetensors file's tensor (named `name`, or its only one) or a literal list.
at::Tensor tensor_argument(const TransformArgs& args, const std::string& name) {
  const TransformValue& value = args.get(name);
  if (value.kind == TransformValue::Kind::kList) return tensor_of_list(args, name, value);
  if (value.kind != TransformValue::Kind::kString) args.fail_type(name, "a tensor, a safetensors file or a list");
  const NamedTensors tensors = safetensors_tensors(safetensors_read(value.text));
  for (const auto& [key, tensor] : tensors)
    if (key == name || tensors.size() == 1) {
      if (!at::isFloatingType(tensor.scalar_type()))
        throw InputError("LinearTransformation(): " + name + " in " + value.text + " is " +
                         dtype_name(tensor.scalar_type()) + ": a floating-point tensor is needed");
      return tensor;
    }
  throw InputError("LinearTransformation(): " + value.text + " holds no tensor named '" + name +
                   "' (and more than one tensor): write it with the tensor under that name");
}

class LinearTransformation final : public FloatKernelTransform {
 public:
  LinearTransformation(TransformValue matrix_arg, TransformValue mean_arg, at::Tensor matrix, at::Tensor mean)
      : matrix_arg_(std::move(matrix_arg)), mean_arg_(std::move(mean_arg)), matrix_(std::move(matrix)),
        mean_(std::move(mean)) {}
  std::string repr() const override {
    return "LinearTransformation(transformation_matrix=" + value_repr(matrix_arg_) +
           ", mean_vector=" + value_repr(mean_arg_) + ")";
  }
  TargetSupport target_support() const override { return TargetSupport::kPixels; }  // targets pass through

  void apply(ImageU8&, Draws&, TransformScratch&) const override {
    throw TransformTypeError(uint8_refusal());
  }
  std::string uint8_refusal() const override {
    return "LinearTransformation(...) on a uint8 image: fastloop runs it on float images; put "
           "ToDtype(torch.float32, scale=False) before it (torchvision's result on uint8 is that one's) or the "
           "conversion its matrix was fitted after (ToDtype(torch.float32, scale=True), ToTensor())";
  }

  void apply_float(at::Tensor& image, Draws&) const override {
    const int64_t n = image.numel();
    if (n != matrix_.size(0))
      throw InputError("Input tensor and transformation matrix have incompatible shape.[" +
                       std::to_string(image.size(0)) + " x " + std::to_string(image.size(1)) + " x " +
                       std::to_string(image.size(2)) + "] != " + std::to_string(matrix_.size(0)));
    const at::Tensor flat = image.reshape({-1, n}) - mean_;
    image = at::mm(flat, matrix_.to(flat.scalar_type())).reshape(image.sizes()).to(image.scalar_type());
  }

 private:
  TransformValue matrix_arg_, mean_arg_;
  at::Tensor matrix_, mean_;
};

TransformPtr linear_transformation_make(const TransformArgs& args) {
  const at::Tensor matrix = tensor_argument(args, "transformation_matrix");
  const at::Tensor mean = tensor_argument(args, "mean_vector");
  if (matrix.dim() != 2 || matrix.size(0) != matrix.size(1))
    throw InputError("transformation_matrix should be square. Got " + shape_repr(matrix) + " rectangular matrix.");
  if (mean.dim() != 1 || mean.size(0) != matrix.size(0))
    throw InputError("mean_vector should have the same length " + std::to_string(mean.size(0)) +
                     " as any one of the dimensions of the transformation_matrix [" + shape_repr(matrix) + "]");
  if (matrix.scalar_type() != mean.scalar_type())
    throw InputError("Input tensors should have the same dtype. Got torch." + dtype_name(matrix.scalar_type()) +
                     " and torch." + dtype_name(mean.scalar_type()));
  return std::make_shared<LinearTransformation>(args.get("transformation_matrix"), args.get("mean_vector"),
                                                matrix.contiguous(), mean.contiguous());
}

}  // namespace

void transforms_register_linear(TransformRegistry& registry) {
  registry.add("LinearTransformation", {param_required("transformation_matrix"), param_required("mean_vector")},
               linear_transformation_make);
}

}  // namespace fastloop
