# The PyPI torch wheel keeps its CUDA libraries (NCCL, cuDNN, cuBLAS...) in site-packages/nvidia/*/lib
# and finds them at run time through $ORIGIN rpaths, which GNU ld does not follow at link time: without
# -rpath-link it resolves libtorch_cuda's libnccl.so.2 to a system NCCL of another version and fails.
# Defines FASTLOOP_TORCH_LINK_OPTIONS (empty for a pytorch.org LibTorch zip).
set(FASTLOOP_TORCH_LINK_OPTIONS "")
file(GLOB _fastloop_wheel_lib_dirs LIST_DIRECTORIES true "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib")
foreach(_dir ${_fastloop_wheel_lib_dirs})
  get_filename_component(_dir "${_dir}" ABSOLUTE)
  list(APPEND FASTLOOP_TORCH_LINK_OPTIONS "LINKER:-rpath-link,${_dir}")
endforeach()

# libstdc++ first among the shared libraries a fastloop binary needs, so the dynamic linker binds std::
# symbols to it: torch 2.11's libtorch.so exports its own copy of std::filesystem (2.14's exports none),
# and with libtorch first in the search order std::filesystem::remove_all jumped to address 0
# (scripts/torch_compat_check.sh found it; the GPU machine has torch 2.11).
list(PREPEND FASTLOOP_TORCH_LINK_OPTIONS "LINKER:--push-state,--no-as-needed,-lstdc++,--pop-state")
