// lut_planes.h's row writer: AVX2 where the CPU has it (checked once), the portable loop otherwise and for
// the last width % 8 pixels. Written by hand: ATen has no table-lookup op a worker thread can call per row, and
// the one gather loop does not warrant Highway as a new dependency; both paths are exact lookups (equal bytes).
#include "fastloop/data/transforms/lut_planes.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace fastloop {

void lut_planes_row_portable(const uint8_t* px, int64_t width, const float* table, float* r, float* g, float* b) {
  const float* table_g = table + 256;
  const float* table_b = table + 512;
  for (int64_t x = 0; x < width; ++x, px += 3) r[x] = table[px[0]], g[x] = table_g[px[1]], b[x] = table_b[px[2]];
}

#if defined(__x86_64__)
namespace {

// Eight RGB pixels (24 bytes: a 16-byte and an 8-byte load, nothing read past them) into three
// vectors of eight indices; then a gather per channel.
__attribute__((target("avx2"))) int64_t lut_planes_avx2(const uint8_t* px, int64_t width, const float* table, float* r,
                                                        float* g, float* b) {
  const __m128i r_lo = _mm_setr_epi8(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i r_hi = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, 2, 5, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i g_lo = _mm_setr_epi8(1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i g_hi = _mm_setr_epi8(-1, -1, -1, -1, -1, 0, 3, 6, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i b_lo = _mm_setr_epi8(2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i b_hi = _mm_setr_epi8(-1, -1, -1, -1, -1, 1, 4, 7, -1, -1, -1, -1, -1, -1, -1, -1);
  int64_t x = 0;
  for (; x + 8 <= width; x += 8, px += 24) {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(px));
    const __m128i hi = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(px + 16));
    const __m256i ri = _mm256_cvtepu8_epi32(_mm_or_si128(_mm_shuffle_epi8(lo, r_lo), _mm_shuffle_epi8(hi, r_hi)));
    const __m256i gi = _mm256_cvtepu8_epi32(_mm_or_si128(_mm_shuffle_epi8(lo, g_lo), _mm_shuffle_epi8(hi, g_hi)));
    const __m256i bi = _mm256_cvtepu8_epi32(_mm_or_si128(_mm_shuffle_epi8(lo, b_lo), _mm_shuffle_epi8(hi, b_hi)));
    _mm256_storeu_ps(r + x, _mm256_i32gather_ps(table, ri, 4));
    _mm256_storeu_ps(g + x, _mm256_i32gather_ps(table + 256, gi, 4));
    _mm256_storeu_ps(b + x, _mm256_i32gather_ps(table + 512, bi, 4));
  }
  return x;
}

const bool kAvx2 = __builtin_cpu_supports("avx2");

}  // namespace

void lut_planes_row(const uint8_t* px, int64_t width, const float* table, float* r, float* g, float* b) {
  const int64_t done = kAvx2 ? lut_planes_avx2(px, width, table, r, g, b) : 0;
  lut_planes_row_portable(px + 3 * done, width - done, table, r + done, g + done, b + done);
}
#else
void lut_planes_row(const uint8_t* px, int64_t width, const float* table, float* r, float* g, float* b) {
  lut_planes_row_portable(px, width, table, r, g, b);
}
#endif

} // namespace fastloop
