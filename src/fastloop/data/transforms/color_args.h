// Pieces the colour and auto-augment transforms share: torchvision's float draws from a sample's Draws
// (torch.rand's 24-bit float, uniform_, randperm, Gamma for Dirichlet) and the checks of p, interpolation
// and fill as torchvision makes them.
#pragma once

#include "fastloop/data/transforms/transform.h"

#include <cstdint>
#include <string>
#include <optional>
#include <vector>

namespace fastloop {

/// torch.rand(()) on CPU: a float with 24 random bits in [0, 1).
float torch_rand(Draws& draws);
/// torch.empty(1).uniform_(lo, hi).item(): a float32 value in [lo, hi].
double torch_uniform(Draws& draws, double lo, double hi);
/// torch.randperm(n) (Fisher-Yates, as ATen's CPU kernel for small n) into `out`.
void torch_randperm(Draws& draws, int64_t n, int64_t* out);
/// Gamma(alpha, 1) (Marsaglia and Tsang, with the alpha < 1 boost): Dirichlet weights are normalised Gammas,
/// as torch._sample_dirichlet draws them.
double gamma_draw(Draws& draws, double alpha);

/// _RandomApplyTransform's check: ValueError unless 0 <= p <= 1.
double random_apply_p(const TransformArgs& args);
/// The interpolation of an affine warp on tensors: nearest or bilinear (F.affine's and F.rotate's only two).
Interpolation affine_interpolation(const TransformArgs& args);
/// fill: None (nullopt: no mask, as torchvision), a number (one value) or a sequence of numbers.
std::optional<std::vector<double>> fill_values(const TransformArgs& args);

} // namespace fastloop
