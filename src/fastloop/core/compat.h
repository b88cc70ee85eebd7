// Every difference between LibTorch versions and builds that fastloop depends on, and the only
// place with #if. Sections: version floor, CUDA build, autocast.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/version.h>

// --- version floor: the device-generic autocast API below arrived in LibTorch 2.4 ---
static_assert(TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4),
              "fastloop needs LibTorch >= 2.4 (older ones lack at::autocast::set_autocast_enabled(device, ...))");

namespace fastloop::compat {

// --- CUDA build: FASTLOOP_WITH_CUDA is defined by CMake when LibTorch was built with CUDA ---
#ifdef FASTLOOP_WITH_CUDA
inline constexpr bool kBuiltWithCuda = true;
#else
inline constexpr bool kBuiltWithCuda = false;
#endif

// --- autocast ---
inline bool autocast_enabled(at::DeviceType device) { return at::autocast::is_autocast_enabled(device); }
inline at::ScalarType autocast_dtype(at::DeviceType device) { return at::autocast::get_autocast_dtype(device); }
inline void autocast_set(at::DeviceType device, bool enabled, at::ScalarType dtype) {
  at::autocast::set_autocast_enabled(device, enabled);
  at::autocast::set_autocast_dtype(device, dtype);
}

} // namespace fastloop::compat
