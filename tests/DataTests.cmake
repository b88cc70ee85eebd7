# The suite of a FASTLOOP_ONLY=data build (CI's sanitizer stage): the tests of core/ and data/ — the loader,
# the samplers, the dataset, image and archive parsers, the transforms, the config parser. They need no
# training code; tests/CMakeLists.txt builds them as fastloop_tests without the suites that run the CLI.
set(FASTLOOP_TEST_SOURCES arrow_images cifar_synthetic config csv_source device_data idx image_decode image_resize imagefolder
  loader loader_state remote_shards remote_sources shards stats tar transforms_color transforms_color_draws transforms_flip transforms_geometry
  transforms_lookup transforms_spec coco_annotations class_map resize_crop_fusion)
list(TRANSFORM FASTLOOP_TEST_SOURCES REPLACE "(.+)" "${CMAKE_CURRENT_SOURCE_DIR}/test_\\1.cpp")
