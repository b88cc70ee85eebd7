// COCO segmentations as masks, byte for byte as pycocotools makes them (what torchvision's
// wrap_dataset_for_transforms_v2 calls): polygons rasterized as maskApi.c's rleFrPoly and merged, RLE counts
// (uncompressed, or compressed as maskApi.c's rleFrString reads them) decoded. Masks are written row-major
// [H, W] as 0/1 bytes; RLE runs go down the columns (COCO's Fortran order). No JSON and no torch here, so
// the fuzz target links these functions alone.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fastloop {

/// The boundary points rleFrPoly finds for the polygon `xy` (x0, y0, x1, y1, ...; `points` points) on an
/// [height, width] canvas, as column-major positions x * height + y (y in [0, height]), unsorted. The mask is
/// the parity of the positions at or before a pixel: what rleFrPoly's sorted, run-length-encoded list means.
void coco_polygon_boundary(const double* xy, int64_t points, int64_t height, int64_t width, std::vector<uint32_t>& out);

/// Sets to 1 the pixels of `mask` (row-major [height, width], not cleared) inside the polygon `xy`: one polygon
/// of pycocotools' frPyObjects + merge + decode. `scratch` is reused from call to call.
void coco_polygon_fill(const double* xy, int64_t points, int64_t height, int64_t width, uint8_t* mask,
                       std::vector<uint32_t>& scratch);

/// Sets to 1 the pixels of `mask` (row-major [height, width], not cleared) that the RLE `counts` (runs of 0s and
/// 1s down the columns, 0s first) marks. The counts must add up to height * width (coco_rle_check).
void coco_rle_fill(const uint32_t* counts, int64_t size, int64_t height, int64_t width, uint8_t* mask);

/// An empty string when `counts` adds up to height * width, else what is wrong, for an error message.
std::string coco_rle_check(const uint32_t* counts, int64_t size, int64_t height, int64_t width);

/// Appends to `counts` the runs of a compressed RLE string (COCO's 6-bit LEB128-like "counts", rleFrString).
/// An empty string when it reads, else what is wrong (a character outside '0'..'o', a run that is negative
/// or above 2^32 - 1, a number longer than 6 characters), for an error message.
std::string coco_rle_from_string(std::string_view text, std::vector<uint32_t>& counts);

} // namespace fastloop
