// lookup_bytes (lookup.h). With AVX-512 VBMI, vpermi2b looks up 64 bytes in one half (128 entries) of a
// table per instruction: two for the halves, a blend on the top bit, and for interleaved channels one
// blend per channel with the lane masks of the vector's phase (64 bytes hold 64 / channels pixels, so with 3
// channels the pattern repeats every 3 vectors). Hand-written because no library we ship applies a byte
// table with VBMI (libjpeg-turbo's and Pillow's are scalar; ATen has no 8-bit table op).
#include "fastloop/data/transforms/functional/lookup.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define FASTLOOP_LOOKUP_VBMI 1
#endif

namespace fastloop {
namespace {

void lookup_scalar(uint8_t* p, int64_t n, int64_t channels, const uint8_t* tables) {
  if (channels == 1) {
    for (int64_t i = 0; i < n; ++i) p[i] = tables[p[i]];
    return;
  }
  if (channels == 3) {
    const uint8_t *t0 = tables, *t1 = tables + 256, *t2 = tables + 512;
    for (int64_t i = 0; i + 3 <= n; i += 3) {
      p[i] = t0[p[i]];
      p[i + 1] = t1[p[i + 1]];
      p[i + 2] = t2[p[i + 2]];
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) p[i] = tables[(i % channels) * 256 + p[i]];
}

#ifdef FASTLOOP_LOOKUP_VBMI
#define LOOKUP_VBMI_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi")))

/// One channel's table looked up for 64 bytes: quarters q[0..3] of its 256 entries.
LOOKUP_VBMI_TARGET inline __m512i lookup64(__m512i x, const __m512i* q) {
  const __m512i low = _mm512_permutex2var_epi8(q[0], x, q[1]);   // entries 0..127 (bit 6 picks q[1])
  const __m512i high = _mm512_permutex2var_epi8(q[2], x, q[3]);  // entries 128..255
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), low, high);
}

LOOKUP_VBMI_TARGET void lookup_vbmi(uint8_t* p, int64_t n, int64_t channels, const uint8_t* tables) {
  __m512i q[4][4];
  for (int64_t k = 0; k < channels; ++k)
    for (int j = 0; j < 4; ++j) q[k][j] = _mm512_loadu_si512(tables + k * 256 + j * 64);
  // masks[phase][k]: the lanes of channel k in vector m, phase = m % channels (byte 64 m + j is channel
  // (64 m + j) % channels).
  __mmask64 masks[4][4] = {};
  for (int64_t phase = 0; phase < channels; ++phase)
    for (int64_t j = 0; j < 64; ++j)
      masks[phase][(phase * 64 + j) % channels] |= __mmask64{1} << j;
  int64_t i = 0, phase = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i x = _mm512_loadu_si512(p + i);
    __m512i out = lookup64(x, q[0]);
    for (int64_t k = 1; k < channels; ++k) out = _mm512_mask_blend_epi8(masks[phase][k], out, lookup64(x, q[k]));
    _mm512_storeu_si512(p + i, out);
    if (++phase == channels) phase = 0;
  }
  // The tail: its first byte is channel i % channels, as lookup_scalar's index expects from 0.
  for (; i < n; ++i) p[i] = tables[(i % channels) * 256 + p[i]];
}

bool vbmi_supported() {
  static const bool supported = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                __builtin_cpu_supports("avx512vbmi");
  return supported;
}
#endif

}  // namespace

bool lookup_is_vectorised() {
#ifdef FASTLOOP_LOOKUP_VBMI
  return vbmi_supported();
#else
  return false;
#endif
}

void lookup_bytes(uint8_t* p, int64_t n, int64_t channels, const uint8_t* tables) {
#ifdef FASTLOOP_LOOKUP_VBMI
  if (vbmi_supported() && channels >= 1 && channels <= 4) return lookup_vbmi(p, n, channels, tables);
#endif
  lookup_scalar(p, n, channels, tables);
}

void lookup_bytes_portable(uint8_t* p, int64_t n, int64_t channels, const uint8_t* tables) {
  lookup_scalar(p, n, channels, tables);
}

}  // namespace fastloop
