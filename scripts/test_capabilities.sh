#!/usr/bin/env bash
# The tests that compare numbers with PyTorch's, again under ATen's kernels for other x86-64 CPUs:
# ATEN_CPU_CAPABILITY=avx2 and =default make this machine run the kernels an AVX2-only CPU and an older one
# run (ATen never picks more than the CPU has, so an AVX-512 machine checks all three). The Python tests that
# compare with torchvision or PyTorch (PYTHON_TESTS: the whole suite twice more took 20 of cold CI's 45 minutes)
# and the C++ suites that compare with PyTorch-made goldens (CAPABILITY_SUITES). Capabilities that equal this machine's own were run by
# scripts/test.sh already and are skipped. `mkl-avx2` keeps this machine's ATen kernels and holds MKL to its AVX2
# code (MKL_ENABLE_INSTRUCTIONS=AVX2), as MKL runs on AMD's CPUs with AVX-512, whose vendor check keeps them from
# its AVX-512 code: torchvision's warp grids (bmm) then round otherwise (tests/python/kernel_parity.py); the Python
# tests alone, the C++ suites compare with goldens made under the same MKL.
# Usage: scripts/test_capabilities.sh [CAPABILITY...]   (default: avx2 default mkl-avx2), after scripts/test.sh built.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
# GoogleTest tests that compare numbers with PyTorch's (a --gtest_filter, run in shards by scripts/gtest_shards.sh):
# the goldens of tests/tools/ (models, one training step of each model and scripted family, schedules, the
# recipes' features against timm and torch), decoded, resized and augmented images, and the transforms against
# torchvision. Not the tests that run fastloop against itself or
# against an export loaded elsewhere (Export*, ImageTraining, TorchScript's runs): ~4 minutes of CPU each time.
CAPABILITY_SUITES='Parity.*:Models.*:Schedule.*:ImageResize.*:ImageAugment.*:ImageDecode.*:TransformsColor.*:TransformsGeometry.*:Whiten.*:Tta.*:SmallCnn*:BnTricks.*:DiracInit.*:Lookahead.*:RecipeMomentum.*:RecipeClip.*:RecipeWeightDecay.*:RecipeEma.*:RecipeMixup.*:TorchScript.Scripted*'
# The goldens of PyTorch's own results (tests/tools/make_test_goldens.py: one training step of each model and
# scripted family) are made again under each capability, by the venv's torch with the same kernels, and the
# suites read them from $FASTLOOP_GOLDEN_DIR: goldens of the machine's own kernels differ from PyTorch's own
# results under `default` by up to 1e-4 (relative; near-zero gradients by 6e-8 where 5e-9 is allowed), while
# PyTorch and fastloop under the same kernels agree within the suites' 1e-5 (measured on the AVX2 EPYC).
# (tests/python/test_run.py is not among them: it compares fastloop.train() with the CLI, the same kernels on both
# sides.)
PYTHON_TESTS=(tests/python/test_transforms_color.py tests/python/test_transforms_core.py
  tests/python/test_transforms_geometry.py tests/python/test_transform_size.py tests/python/test_batch_transform.py
  tests/python/test_pipelines_train.py tests/python/test_loader_params.py tests/python/test_transforms_targets.py
  tests/python/test_resize_crop_fusion.py tests/python/test_transform_digests.py tests/python/test_decode_parity.py
  tests/python/test_transforms_detection.py tests/python/test_reference_presets.py tests/python/test_keypoints.py
  tests/python/test_transforms_jpeg.py tests/python/test_transforms_elastic.py tests/python/test_crop_views.py
  tests/python/test_transforms_float.py tests/python/test_transforms_linear.py)
native="$(env -u ATEN_CPU_CAPABILITY .venv/bin/python -c 'import torch; print(torch.backends.cpu.get_cpu_capability().lower())')"
for capability in "${@:-avx2 default mkl-avx2}"; do
  for cap in $capability; do
    if [ "$cap" = mkl-avx2 ]; then
      echo "=== MKL_ENABLE_INSTRUCTIONS=AVX2 ($native kernels): the Python tests that compare with PyTorch"
      MKL_ENABLE_INSTRUCTIONS=AVX2 FASTLOOP_BUILD_DIR="$PWD/$build_dir" \
        .venv/bin/python -m pytest -q -p no:cacheprovider "${PYTHON_TESTS[@]}"
      continue
    fi
    if [ "$cap" = "$native" ]; then
      echo "test_capabilities: $cap is this machine's own kernels (scripts/test.sh ran them)"
      continue
    fi
    echo "=== ATEN_CPU_CAPABILITY=$cap: the C++ suites and the Python tests that compare with PyTorch"
    goldens="$(mktemp -d "${TMPDIR:-/tmp}/fastloop-goldens-$cap.XXXXXX")"
    ATEN_CPU_CAPABILITY=$cap .venv/bin/python tests/tools/make_test_goldens.py "$goldens"
    ATEN_CPU_CAPABILITY=$cap FASTLOOP_GOLDEN_DIR="$goldens" SHARDS=4 \
      scripts/gtest_shards.sh "$build_dir/tests/fastloop_tests" "$CAPABILITY_SUITES"
    rm -rf "$goldens"
    ATEN_CPU_CAPABILITY=$cap FASTLOOP_BUILD_DIR="$PWD/$build_dir" \
      .venv/bin/python -m pytest -q -p no:cacheprovider "${PYTHON_TESTS[@]}"
  done
done
