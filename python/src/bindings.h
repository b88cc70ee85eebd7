// fastloop._C: the pybind11 module behind `import fastloop`. It holds no logic of its own: each call maps
// to the C++ entry point the CLI uses (the Loader with train_loader_options, train_run, eval_run).
#pragma once

#include "fastloop/fastloop.h"  // the public API only

#include <torch/python.h>

#include <string>

namespace fastloop::python {

namespace py = pybind11;

/// A Python bool, int, float or str as the value of the setting `key` (config_set); else an InputError.
ConfigValue config_value_of(const py::handle& value, const std::string& key);

/// _C.Loader: one split of a --data source, iterated batch by batch.
void loader_bind(py::module_& module);

/// _C.train and _C.evaluate: `fastloop train` and `fastloop eval` as calls.
void run_bind(py::module_& module);

/// _C._transform_apply, _transform_repr, _transform_draws: a transform spec compiled and run on one image.
void transforms_bind(py::module_& module);

} // namespace fastloop::python
