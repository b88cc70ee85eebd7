// The output stage's last step for the common batch (float32, NCHW, RGB): each uint8 pixel of a row through
// its channel's lookup table (256 floats per channel, output_stage.h's value table) into the three planes.
// Hand-written: the scalar loop does three table loads and three 4-byte stores per pixel and took 14% of a
// loader worker's time on 224 px photos (perf, docs/benchmarks.md#the-decode-limit); with AVX2 eight pixels are
// split into channels by two byte shuffles, looked up by gathers and stored eight floats at a time. The values
// stored are the table's own, so the bytes are the scalar loop's.
#pragma once

#include <cstdint>

namespace fastloop {

/// r[x], g[x], b[x] = table[px[3x]], table[256 + px[3x + 1]], table[512 + px[3x + 2]] for x in [0, width).
void lut_planes_row(const uint8_t* px, int64_t width, const float* table, float* r, float* g, float* b);

/// The same with the portable loop only (the tests compare the two).
void lut_planes_row_portable(const uint8_t* px, int64_t width, const float* table, float* r, float* g, float* b);

} // namespace fastloop
