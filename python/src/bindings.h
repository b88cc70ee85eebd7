// fastloop._C: the pybind11 module behind `import fastloop`. It holds no logic of its own: each call maps
// to the C++ entry point the CLI uses (the Loader with train_loader_options, train_run, eval_run).
#pragma once

#include <torch/python.h>

namespace fastloop::python {

namespace py = pybind11;

/// _C.Loader: one split of a --data source, iterated batch by batch.
void loader_bind(py::module_& module);

/// _C.train and _C.evaluate: `fastloop train` and `fastloop eval` as calls.
void run_bind(py::module_& module);

/// _C._transform_apply, _transform_repr, _transform_draws: a transform spec compiled and run on one image.
void transforms_bind(py::module_& module);

} // namespace fastloop::python
