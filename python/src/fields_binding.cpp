// _C.FieldShards and _C._field_spec: the sources of fastloop.Loader(..., fields=...) and of its mixtures
// (python/fastloop/_fields.py). A batch's other fields are read here once per batch, by the sample indices
// the batch's labels carry: text as str (checked UTF-8 by the workers), JSON as one "[...]" document for one
// json.loads, whole numbers as an int64 tensor, anything else as bytes.
#include "bindings.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fastloop::python {
namespace {

const char* kind_name(FieldKind kind) {
  switch (kind) {
    case FieldKind::kImage: return "image";
    case FieldKind::kText: return "text";
    case FieldKind::kJson: return "json";
    case FieldKind::kInt: return "int";
    default: return "bytes";
  }
}

/// Field f of the samples `indices` (int64, a CPU tensor) as one Python object: a list of str or bytes, the
/// JSON text of a list for json.loads, or an int64 tensor. `member(i, hold)` is sample i's field f.
template <typename Member>
py::object field_batch(const FieldSpec& spec, const at::Tensor& indices, Member member) {
  const at::Tensor index = indices.to(at::kCPU, at::kLong).contiguous();
  const int64_t* at = index.const_data_ptr<int64_t>();
  const int64_t count = index.numel();
  std::string hold;
  if (spec.kind == FieldKind::kInt) {
    at::Tensor out = at::empty({count}, at::kLong);
    for (int64_t b = 0; b < count; ++b) out.data_ptr<int64_t>()[b] = field_int_parse(member(at[b], hold)).value_or(-1);
    return py::cast(out);
  }
  if (spec.kind == FieldKind::kJson) {
    std::string joined = "[";
    for (int64_t b = 0; b < count; ++b) {
      if (b) joined += ',';
      const std::string_view data = member(at[b], hold);
      joined += spec.json_key.empty() ? std::string(data) : field_json_value(data, spec.json_key);
    }
    joined += ']';
    return py::bytes(joined);
  }
  py::list out(static_cast<size_t>(count));
  for (int64_t b = 0; b < count; ++b) {
    const std::string_view data = member(at[b], hold);
    out[static_cast<size_t>(b)] = spec.kind == FieldKind::kText
                                      ? py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(
                                            data.data(), static_cast<Py_ssize_t>(data.size()), "replace"))
                                      : py::bytes(data.data(), data.size());
  }
  return out;
}

py::object local_field_batch(const FieldShards& shards, const at::Tensor& indices, size_t f) {
  const FieldSpec& spec = shards.fields().at(f);
  return field_batch(spec, indices, [&](int64_t i, std::string&) {
    auto data = shards.field(i, f);
    if (!data) throw InputError(shards.name(i) + ": the sample has no ." + spec.name + " member");
    return *data;
  });
}

py::object remote_field_batch(const RemoteShardImages& shards, const at::Tensor& indices, size_t f) {
  return field_batch(shards.fields().at(f), indices, [&](int64_t i, std::string& hold) {
    hold = shards.field(i, f);
    return std::string_view(hold);
  });
}

/// The split of a remote `shards:` spec (s3://, http(s)://) read as samples of `fields`.
std::shared_ptr<RemoteShardImages> remote_fields_load(const std::string& spec, const std::vector<std::string>& fields,
                                                      bool train, bool shuffled, int64_t shuffle_buffer,
                                                      double timeout_s, const std::string& cache_dir,
                                                      int64_t cache_bytes) {
  RemoteShardOptions options;
  for (const std::string& f : fields) options.fields.push_back(field_spec_parse(f));
  options.shuffle_buffer = shuffle_buffer;
  options.shuffled = shuffled;
  options.fetch.timeout_s = timeout_s;
  options.cache_dir = cache_dir;
  options.cache_bytes = cache_bytes;
  RemoteShardSplits splits = remote_shards_load(spec, options);
  if (!train && !splits.val)
    throw InputError(spec + " has no val split: give it as shards:TRAIN::VAL (or a folder with val-*.tar shards)");
  return train ? splits.train : splits.val;
}

}  // namespace

std::shared_ptr<const EncodedImages> encoded_source_of(const py::handle& object, int64_t shuffle_buffer) {
  if (py::isinstance<FieldShards>(object)) return object.cast<std::shared_ptr<FieldShards>>();
  if (py::isinstance<RemoteShardImages>(object)) return object.cast<std::shared_ptr<RemoteShardImages>>();
  std::shared_ptr<const EncodedImages> split;
  if (py::hasattr(object, "image_parts")) {  // one Arrow split per image column (fastloop/_fields.py)
    std::vector<std::shared_ptr<const EncodedImages>> parts;
    for (const auto& part : object.attr("image_parts")) parts.push_back(arrow_source_of(part).make(shuffle_buffer));
    split = std::make_shared<ImageParts>(std::move(parts));
  } else {
    split = arrow_source_of(object).make(shuffle_buffer);
  }
  // the samples whose other columns failed their checks (fastloop/_fields.py): bad when read
  auto bad = py::hasattr(object, "field_problems")
                 ? object.attr("field_problems").cast<std::unordered_map<int64_t, std::string>>()
                 : std::unordered_map<int64_t, std::string>{};
  if (bad.empty()) return split;
  return std::make_shared<FlaggedImages>(std::move(split), std::move(bad));
}

void fields_bind(py::module_& module) {
  module.def(
      "_field_spec", [](const std::string& text) {
        const FieldSpec spec = field_spec_parse(text);
        return py::make_tuple(spec.extensions, kind_name(spec.kind), spec.json_key);
      },
      py::arg("text"), "(extensions, kind, json key) of one field of fields=: kind image, text, json, int or bytes");
  py::class_<FieldShards, std::shared_ptr<FieldShards>>(module, "FieldShards",
                                                         "tar shards read as samples of named fields")
      .def(py::init([](std::vector<std::string> paths, const std::vector<std::string>& fields, bool shuffled,
                       int64_t shuffle_buffer, bool resampled) {
             std::vector<FieldSpec> specs;
             for (const std::string& f : fields) specs.push_back(field_spec_parse(f));
             py::gil_scoped_release release;  // mapping and listing the shards
             return std::make_shared<FieldShards>(std::move(paths), std::move(specs),
                                                  FieldShardOptions{shuffled, shuffle_buffer, resampled});
           }),
           py::arg("paths"), py::arg("fields"), py::arg("shuffled"), py::arg("shuffle_buffer"),
           py::arg("resampled") = false)
      .def("__len__", &FieldShards::size)
      .def("key", &FieldShards::key, py::arg("index"))
      .def("num_classes", &FieldShards::num_classes, py::arg("field"),
           "one more than the largest whole number among field `field`'s members (0: none)")
      .def("name", &FieldShards::name, py::arg("index"))
      .def("field", &local_field_batch, py::arg("indices"), py::arg("field"),
           "field `field` of the samples `indices`, as one Python object");
  py::class_<RemoteShardImages, std::shared_ptr<RemoteShardImages>>(
      module, "RemoteFieldShards", "tar shards in object storage (s3://, http(s)://) read as samples of named fields")
      .def(py::init([](const std::string& spec, const std::vector<std::string>& fields, bool train, bool shuffled,
                       int64_t shuffle_buffer, double timeout_s, const std::string& cache_dir, int64_t cache_bytes) {
             py::gil_scoped_release release;  // fetching the shard index
             return remote_fields_load(spec, fields, train, shuffled, shuffle_buffer, timeout_s, cache_dir,
                                       cache_bytes);
           }),
           py::arg("spec"), py::arg("fields"), py::arg("train"), py::arg("shuffled"), py::arg("shuffle_buffer"),
           py::arg("timeout"), py::arg("cache_dir"), py::arg("cache_bytes"))
      .def("__len__", &RemoteShardImages::size)
      .def_property_readonly(
          "requests", [](const RemoteShardImages& shards) { return shards.counters().requests.load(); },
          "GETs sent so far (whole shards, and samples of evicted shards alone), retries included")
      .def_property_readonly("kept", &RemoteShardImages::kept,
                             "samples whose other fields the workers read and the consumer has not yet")
      .def("name", &RemoteShardImages::name, py::arg("index"))
      .def_property_readonly("classes", &RemoteShardImages::classes,
                             "the class names: classes.txt beside the shards, or numbered by shards.idx's counts")
      .def("field", &remote_field_batch, py::arg("indices"), py::arg("field"),
           "field `field` of the samples `indices` (each read by the workers once), as one Python object");
}

}  // namespace fastloop::python
