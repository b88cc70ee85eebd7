// Histogram kernels on uint8 images as torchvision.transforms.v2.functional computes them on uint8 tensors:
// autocontrast (each channel's min..max stretched to 0..255 in float32) and equalize (PIL's lookup table from
// each channel's cumulative histogram, in integers). Both reduce to a 256-entry table per channel, so both
// give torchvision's bytes exactly. In place.
#pragma once

#include "fastloop/data/transforms/image_u8.h"

namespace fastloop {

/// v2.functional.autocontrast: 1 or 3 channels (TypeError otherwise, as torchvision).
void autocontrast_u8(ImageU8& image);

/// v2.functional.equalize: every channel (alpha too, as torchvision); a channel whose pixels all but the
/// brightest level's number fewer than 255 is left as is.
void equalize_u8(ImageU8& image);

} // namespace fastloop
