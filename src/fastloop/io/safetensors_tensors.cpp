// The at::Tensor <-> safetensors conversion (io/safetensors.h holds the format itself).
#include "fastloop/io/safetensors_tensors.h"

#include "fastloop/core/errors.h"

#include <ATen/ATen.h>

#include <cstring>

namespace fastloop {
namespace {

const std::vector<std::pair<at::ScalarType, const char*>>& dtype_names() {
  static const std::vector<std::pair<at::ScalarType, const char*>> kNames = {
      {at::kDouble, "F64"}, {at::kFloat, "F32"}, {at::kHalf, "F16"},  {at::kBFloat16, "BF16"}, {at::kLong, "I64"},
      {at::kInt, "I32"},    {at::kShort, "I16"}, {at::kChar, "I8"},   {at::kByte, "U8"},       {at::kBool, "BOOL"}};
  return kNames;
}

}  // namespace

void safetensors_write(const std::string& path, const NamedTensors& tensors, const SafetensorsMetadata& metadata) {
  std::vector<at::Tensor> keep;  // the views below point into these
  std::vector<SafetensorsView> views;
  for (const auto& [name, tensor] : tensors) {
    const char* dtype = nullptr;
    for (const auto& [type, text] : dtype_names())
      if (type == tensor.scalar_type()) dtype = text;
    if (!dtype) throw InputError("tensor '" + name + "' has dtype " + std::string(c10::toString(tensor.scalar_type())) +
                                 ", which safetensors cannot store");
    keep.push_back(tensor.detach().to(at::kCPU).contiguous());
    const at::Tensor& t = keep.back();
    views.push_back({name, dtype, t.sizes().vec(), t.data_ptr(), static_cast<size_t>(t.numel() * t.element_size())});
  }
  safetensors_write(path, views, metadata);
}

NamedTensors safetensors_tensors(const SafetensorsFile& file) {
  NamedTensors out;
  for (const auto& t : file.header.tensors) {
    at::ScalarType type = at::kFloat;
    for (const auto& [scalar, text] : dtype_names())
      if (t.dtype == text) type = scalar;
    // BOOL arrives as bytes: any non-zero byte is true, and no invalid bool value is ever formed.
    at::Tensor tensor = at::empty(t.shape, at::TensorOptions().dtype(type == at::kBool ? at::kByte : type));
    if (t.nbytes) std::memcpy(tensor.data_ptr(), file.data(t), t.nbytes);
    if (type == at::kBool) tensor = tensor.ne(0);
    out.emplace_back(t.name, std::move(tensor));
  }
  return out;
}

} // namespace fastloop
