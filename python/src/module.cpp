// PYBIND11_MODULE(_C): the version, the error mapping (fastloop's InputError -> ValueError, RunError and
// anything else -> RuntimeError, with the CLI's message) and the bindings of loader_binding.cpp and
// run_binding.cpp.
#include "bindings.h"
#include "fork_safe.h"

#include "fastloop/fastloop.h"  // the public API only

#include <c10/util/Exception.h>

namespace fastloop::python {
namespace {

void errors_translate() {
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const RunError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const c10::Error& e) {  // LibTorch's own, without its C++ backtrace
      PyErr_SetString(PyExc_RuntimeError, e.what_without_backtrace());
    }
  });
}

}  // namespace
}  // namespace fastloop::python

PYBIND11_MODULE(_C, module) {
  namespace fp = fastloop::python;
  module.doc() = "fastloop's C++ engine: its loader, `fastloop train` and `fastloop eval`";
  module.attr("__version__") = FASTLOOP_VERSION;
  fp::import_pid();  // forked children are told apart from this process from now on
  fp::errors_translate();
  fp::loader_bind(module);
  fp::run_bind(module);
  fp::transforms_bind(module);
  fp::arrow_bind(module);
  fp::fields_bind(module);
  fp::coco_bind(module);
  fp::segmentation_bind(module);
  fp::video_bind(module);
}
