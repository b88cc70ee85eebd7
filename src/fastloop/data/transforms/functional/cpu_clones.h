// One macro for the kernels compiled twice -- for AVX2 and for the x86-64 baseline, the one to run picked
// at load time (GCC's function multiversioning) -- and once elsewhere, and under AddressSanitizer (whose
// runtime is not ready when the loader runs the ifunc resolvers of an instrumented library).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define FASTLOOP_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define FASTLOOP_AVX2_CLONES
#endif
