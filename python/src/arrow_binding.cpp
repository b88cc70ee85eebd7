// The Arrow sources of fastloop.Loader (python/fastloop/_arrow.py: Parquet files, a Hugging Face
// `datasets.Dataset`) handed to C++ through the Arrow C data interface: pyarrow exports each column as a
// pair of PyCapsules (`__arrow_c_array__`), whose ArrowArray is taken over here and read in place, so no
// Arrow library is linked and any pyarrow version works. A Parquet split's row groups are read by its
// reader thread, which takes the GIL only for the call into pyarrow (workers never do).
#include "bindings.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fastloop::python {
namespace {

/// The column in `pair` (an `(arrow_schema, arrow_array)` capsule pair), taken over. Under the GIL.
ArrowBinaryColumn column_of(const py::handle& pair, const std::string& name) {
  const auto capsules = pair.cast<py::tuple>();
  if (capsules.size() != 2) throw InputError(name + ": not an Arrow (schema, array) capsule pair");
  auto* schema = static_cast<ArrowSchema*>(PyCapsule_GetPointer(capsules[0].ptr(), "arrow_schema"));
  auto* array = static_cast<ArrowArray*>(PyCapsule_GetPointer(capsules[1].ptr(), "arrow_array"));
  if (schema == nullptr || array == nullptr) throw py::error_already_set();
  if (array->release == nullptr) throw InputError(name + ": the Arrow array was released already");
  return ArrowBinaryColumn(std::move(*array), schema->format, name);  // the capsule keeps the schema
}

/// A Python object kept by C++ threads: copies of the pointer need no GIL; the last one takes it to let go.
std::shared_ptr<py::object> kept_object(const py::handle& object) {
  return std::shared_ptr<py::object>(new py::object(py::reinterpret_borrow<py::object>(object)), [](py::object* o) {
    if (!Py_IsInitialized()) return;  // the interpreter is gone: nothing to release to
    py::gil_scoped_acquire gil;
    delete o;
  });
}

/// Reads row group g with the split's `read(g)` (a capsule pair; a list of them, one per image column), on the
/// reader thread: the GIL only for that call. A Python exception becomes an InputError with its message (it
/// names the file and row group).
ArrowGroupReader group_reader(std::shared_ptr<py::object> split, std::vector<std::string> names) {
  return [split = std::move(split), names = std::move(names)](int64_t group) {
    if (!Py_IsInitialized()) throw RunError("Parquet: the Python interpreter is shutting down");
    py::gil_scoped_acquire gil;
    std::string message;
    try {
      const py::object read = split->attr("read")(group);
      const std::string& name = names[static_cast<size_t>(group)];
      std::vector<ArrowBinaryColumn> columns;
      if (!py::isinstance<py::list>(read)) columns.push_back(column_of(read, name));
      else
        for (const auto& pair : read) columns.push_back(column_of(pair, name));
      return columns;
    } catch (py::error_already_set& e) {
      message = py::str(e.value()).cast<std::string>();
    }
    throw InputError(message);
  };
}

}  // namespace

ArrowSource arrow_source_of(const py::handle& split) {
  ArrowSource source;
  source.classes = split.attr("classes").cast<std::vector<std::string>>();
  auto labels = std::make_shared<const std::vector<int64_t>>(split.attr("labels").cast<std::vector<int64_t>>());
  if (split.attr("resident").cast<bool>()) {
    auto columns = std::make_shared<std::vector<ArrowBinaryColumn>>();
    const auto names = split.attr("column_names").cast<std::vector<std::string>>();
    const py::list pairs = split.attr("columns")();
    for (size_t c = 0; c < pairs.size(); ++c) columns->push_back(column_of(pairs[c], names.at(c)));
    const auto rows = std::make_shared<const std::vector<int64_t>>(split.attr("rows").cast<std::vector<int64_t>>());
    const auto name = split.attr("name").cast<std::string>();
    source.make = [columns = std::shared_ptr<const std::vector<ArrowBinaryColumn>>(std::move(columns)), rows, labels,
                   name](int64_t) { return std::make_shared<ArrowTableImages>(columns, *rows, *labels, name); };
    return source;
  }
  std::vector<ArrowGroup> groups;
  const auto names = split.attr("group_names").cast<std::vector<std::string>>();
  const auto rows = split.attr("group_rows").cast<std::vector<int64_t>>();
  for (size_t g = 0; g < names.size(); ++g) groups.push_back({names[g], rows.at(g)});
  ArrowGroupReader reader = group_reader(kept_object(split), names);
  const int64_t parts = py::hasattr(split, "parts") ? split.attr("parts").cast<int64_t>() : 1;
  source.make = [groups = std::move(groups), labels, reader = std::move(reader), parts](int64_t shuffle_buffer) {
    return std::make_shared<ArrowGroupImages>(groups, *labels, reader, shuffle_buffer, 0,
                                              ArrowGroupImages::kCacheBytes, parts);
  };
  return source;
}

} // namespace fastloop::python

namespace fastloop::python {
namespace {

/// An object of S3-compatible storage or a web server read by ranges with fastloop's fetcher (retries that
/// resume, named errors, --data-timeout): what pyarrow reads remote Parquet files through
/// (python/fastloop/_arrow.py wraps it as a file). The GIL is released while bytes arrive.
class RemoteFile {
 public:
  RemoteFile(const std::string& url, double timeout_s) : url_(remote_url_parse(url)) {
    FetchOptions options;
    options.timeout_s = timeout_s;
    fetcher_ = std::make_shared<const HttpFetcher>(aws_credentials_resolve(env_lookup_process()), options);
    py::gil_scoped_release release;
    size_ = fetcher_->size(url_);
  }
  int64_t size() const { return size_; }
  py::bytes read(int64_t offset, int64_t count) const {
    std::string bytes;
    count = std::max<int64_t>(0, std::min(count, size_ - offset));
    if (count > 0) {
      py::gil_scoped_release release;
      bytes = fetcher_->get(url_, offset, count);
    }
    return py::bytes(bytes);
  }
  int64_t requests() const { return fetcher_->counters().requests.load(); }

 private:
  RemoteUrl url_;
  std::shared_ptr<const HttpFetcher> fetcher_;
  int64_t size_ = 0;
};

}  // namespace

void arrow_bind(py::module_& module) {
  py::class_<RemoteFile>(module, "_RemoteFile", "an s3:// or http(s):// object read by ranges (fastloop's fetcher)")
      .def(py::init<const std::string&, double>(), py::arg("url"), py::arg("timeout"))
      .def_property_readonly("size", &RemoteFile::size)
      .def_property_readonly("requests", &RemoteFile::requests, "GETs sent so far, retries included")
      .def("read", &RemoteFile::read, py::arg("offset"), py::arg("count"), "bytes [offset, offset + count)");
  module.def(
      "_column_problems",
      [](const py::handle& pair, const std::string& field) {
        const FieldSpec spec = field_spec_parse(field);
        const ArrowBinaryColumn column = column_of(pair, field);
        std::vector<std::pair<int64_t, std::string>> out;
        {
          py::gil_scoped_release release;
          for (int64_t row = 0; row < column.size(); ++row)
            if (std::string why = field_problem(spec, column.value(row)); !why.empty())
              out.emplace_back(row, std::move(why));
        }
        return out;
      },
      py::arg("column"), py::arg("field"),
      "(row, why) of each value of a binary Arrow column (a capsule pair, no nulls) that `field`'s check refuses: "
      "text that is not UTF-8, JSON that does not parse (or lacks the picked key), not a whole number");
  module.def("_pattern_expand", [](const std::string& pattern) { return shard_pattern_expand(pattern); },
             py::arg("pattern"), "the files a brace pattern names, in order (shards' {a,b} and {000..123})");
}

} // namespace fastloop::python
