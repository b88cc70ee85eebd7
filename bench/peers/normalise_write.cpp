// The loader's float32 normalise write in isolation (docs/benchmarks.md#where-the-rest-of-the-loaders-time-goes-benchpeersprofilesh):
// one 224 x 224 RGB uint8 image into three float32 planes per "sample", four ways — gathers from the value table
// (lut_planes.cpp's kernel), float32 arithmetic (v * (1/255) - mean) / std, and each with streaming stores — into
// one destination (stays in L2) or into `buffers` destinations in turn (128: a batch, out of cache). Thread CPU
// time per image, so other processes on the machine inflate it less than wall time. Stand-alone on purpose:
//   g++ -O2 -o /tmp/normalise_write bench/peers/normalise_write.cpp && /tmp/normalise_write 1 && /tmp/normalise_write 128
#include <immintrin.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

double cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) * 1e-3;
}

// Eight RGB pixels split into three vectors of eight channel values (as lut_planes.cpp does).
struct Split {
  __m256i r, g, b;
};

__attribute__((target("avx2"))) inline Split split8(const uint8_t* px) {
  const __m128i r_lo = _mm_setr_epi8(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i r_hi = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, 2, 5, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i g_lo = _mm_setr_epi8(1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i g_hi = _mm_setr_epi8(-1, -1, -1, -1, -1, 0, 3, 6, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i b_lo = _mm_setr_epi8(2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i b_hi = _mm_setr_epi8(-1, -1, -1, -1, -1, 1, 4, 7, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(px));
  const __m128i hi = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(px + 16));
  return {_mm256_cvtepu8_epi32(_mm_or_si128(_mm_shuffle_epi8(lo, r_lo), _mm_shuffle_epi8(hi, r_hi))),
          _mm256_cvtepu8_epi32(_mm_or_si128(_mm_shuffle_epi8(lo, g_lo), _mm_shuffle_epi8(hi, g_hi))),
          _mm256_cvtepu8_epi32(_mm_or_si128(_mm_shuffle_epi8(lo, b_lo), _mm_shuffle_epi8(hi, b_hi)))};
}

template <bool kStream>
__attribute__((target("avx2"))) inline void store8(float* at, __m256 v) {
  if constexpr (kStream) _mm256_stream_ps(at, v);
  else _mm256_storeu_ps(at, v);
}

template <bool kStream>
__attribute__((target("avx2"))) void gather_row(const uint8_t* px, int64_t width, const float* table, float* r,
                                                float* g, float* b) {
  for (int64_t x = 0; x + 8 <= width; x += 8, px += 24) {
    const Split s = split8(px);
    store8<kStream>(r + x, _mm256_i32gather_ps(table, s.r, 4));
    store8<kStream>(g + x, _mm256_i32gather_ps(table + 256, s.g, 4));
    store8<kStream>(b + x, _mm256_i32gather_ps(table + 512, s.b, 4));
  }
}

__attribute__((target("avx2"))) inline __m256 affine8(__m256i v, __m256 scale, __m256 mean, __m256 std) {
  return _mm256_div_ps(_mm256_sub_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(v), scale), mean), std);
}

// k: scale, then mean and std of r, g, b.
template <bool kStream>
__attribute__((target("avx2"))) void arith_row(const uint8_t* px, int64_t width, const float* k, float* r, float* g,
                                               float* b) {
  const __m256 scale = _mm256_set1_ps(k[0]);
  const __m256 m[3] = {_mm256_set1_ps(k[1]), _mm256_set1_ps(k[2]), _mm256_set1_ps(k[3])};
  const __m256 d[3] = {_mm256_set1_ps(k[4]), _mm256_set1_ps(k[5]), _mm256_set1_ps(k[6])};
  for (int64_t x = 0; x + 8 <= width; x += 8, px += 24) {
    const Split s = split8(px);
    store8<kStream>(r + x, affine8(s.r, scale, m[0], d[0]));
    store8<kStream>(g + x, affine8(s.g, scale, m[1], d[1]));
    store8<kStream>(b + x, affine8(s.b, scale, m[2], d[2]));
  }
}

}  // namespace

int main(int argc, char** argv) {
  constexpr int64_t kW = 224, kH = 224, kSamples = 2000;
  const int64_t buffers = argc > 1 ? std::atoll(argv[1]) : 1;
  if (buffers < 1 || !__builtin_cpu_supports("avx2")) {
    std::fprintf(stderr, "usage: normalise_write BUFFERS (>= 1), on a CPU with AVX2\n");
    return 2;
  }
  std::vector<uint8_t> image(kW * kH * 3 + 64);
  for (uint8_t& p : image) p = static_cast<uint8_t>(std::rand());
  std::vector<float> table(768);
  for (int i = 0; i < 768; ++i) table[static_cast<size_t>(i)] = static_cast<float>(i) * 0.01F;
  const float k[7] = {1.0F / 255.0F, 0.485F, 0.456F, 0.406F, 0.229F, 0.224F, 0.225F};
  const size_t plane = 3 * kW * kH;
  auto* out = static_cast<float*>(std::aligned_alloc(64, static_cast<size_t>(buffers) * plane * sizeof(float)));
  std::memset(out, 0, static_cast<size_t>(buffers) * plane * sizeof(float));  // faulted in before timing
  const char* names[4] = {"gathers", "arithmetic", "gathers, streaming stores", "arithmetic, streaming stores"};
  for (int mode = 0; mode < 4; ++mode) {
    for (int rep = 0; rep < 2; ++rep) {
      const double t0 = cpu_us();
      for (int64_t i = 0; i < kSamples; ++i) {
        float* o = out + static_cast<size_t>(i % buffers) * plane;
        for (int64_t y = 0; y < kH; ++y) {
          const uint8_t* px = image.data() + y * kW * 3;
          float* r = o + y * kW;
          float* g = r + kH * kW;
          float* b = g + kH * kW;
          if (mode == 0) gather_row<false>(px, kW, table.data(), r, g, b);
          if (mode == 1) arith_row<false>(px, kW, k, r, g, b);
          if (mode == 2) gather_row<true>(px, kW, table.data(), r, g, b);
          if (mode == 3) arith_row<true>(px, kW, k, r, g, b);
        }
        if (mode >= 2) _mm_sfence();
      }
      std::printf("%-30s %lld destination(s): %6.1f us CPU per image\n", names[mode], static_cast<long long>(buffers),
                  (cpu_us() - t0) / kSamples);
    }
  }
  std::free(out);
  return 0;
}
