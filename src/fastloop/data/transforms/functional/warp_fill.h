// The fill of torchvision's tensor warps (affine, rotate, perspective), as warp.h's functions and warp.cpp's
// row samplers (warp_rows.h) take it.
#pragma once

namespace fastloop {

/// torchvision's fill of a warp: None (no mask; the zeros of the padding stay) or one value per channel.
struct WarpFill {
  bool none = false;
  float values[4] = {0.f, 0.f, 0.f, 0.f};
};

}  // namespace fastloop
