// Byte tables applied to images: every byte of an interleaved (HWC) image through its channel's 256-entry
// table. The per-value kernels (brightness, contrast, autocontrast, equalize) build a table from torchvision's
// own arithmetic, so a lookup gives its bytes exactly; this file makes the lookup itself fast.
#pragma once

#include <cstdint>

namespace fastloop {

/// Whether lookup_bytes runs vectorised here (AVX-512 VBMI: 64 bytes per few instructions); elsewhere it
/// goes a byte at a time, and a kernel with a vectorisable formula is faster computing it directly.
bool lookup_is_vectorised();

/// p[i] = tables[(i % channels) * 256 + p[i]] for the n bytes of an image of `channels` (1 to 4)
/// interleaved channels; n is a multiple of channels.
void lookup_bytes(uint8_t* p, int64_t n, int64_t channels, const uint8_t* tables);

/// lookup_bytes a byte at a time, whatever the CPU (what CPUs without VBMI run; for the tests).
void lookup_bytes_portable(uint8_t* p, int64_t n, int64_t channels, const uint8_t* tables);

}  // namespace fastloop
