# The suite of a FASTLOOP_ONLY=data build (CI's sanitizer stage): the tests of core/ and data/ — the loader,
# the samplers, the dataset, image and archive parsers, the transforms, the config parser — in a binary of
# their own. They need no CLI, no training code and no generated golden; the tests of those files that run
# the CLI (suites named *Cli) are not listed.
set(FASTLOOP_DATA_TESTS cifar_synthetic config csv_source device_data idx image_decode image_resize imagefolder
  loader shards stats tar transforms_color transforms_color_draws transforms_flip transforms_geometry
  transforms_lookup transforms_spec)
list(TRANSFORM FASTLOOP_DATA_TESTS REPLACE "(.+)" "${CMAKE_CURRENT_SOURCE_DIR}/test_\\1.cpp")
add_executable(fastloop_tests ${FASTLOOP_DATA_TESTS})
target_link_libraries(fastloop_tests PRIVATE fastloop GTest::gtest GTest::gtest_main nlohmann_json::nlohmann_json)
target_compile_options(fastloop_tests PRIVATE -Wall -Wextra -fPIC)
set_target_properties(fastloop_tests PROPERTIES POSITION_INDEPENDENT_CODE OFF)
target_precompile_headers(fastloop_tests REUSE_FROM fastloop)
fastloop_skip_pch_without_torch(${FASTLOOP_DATA_TESTS})  # cmake/TorchFreeSources.cmake
target_compile_definitions(fastloop_tests PRIVATE
  FASTLOOP_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}"
  FASTLOOP_CLI="${PROJECT_BINARY_DIR}/fastloop-is-not-built-with-FASTLOOP_ONLY=data"
  FASTLOOP_PYTHON="${FASTLOOP_PYTHON}"
  FASTLOOP_GOLDEN_DIR="${CMAKE_CURRENT_SOURCE_DIR}/golden")
gtest_discover_tests(fastloop_tests DISCOVERY_TIMEOUT 60 TEST_FILTER "-*Cli.*" PROPERTIES TIMEOUT 600)
