#include "fastloop/data/transforms/registry.h"

#include "fastloop/data/transforms/families.h"

namespace fastloop {

const TransformRegistry& transform_registry() {
  // A function-local static: C++11 makes its construction thread-safe, and it is built on first use.
  static const TransformRegistry registry = [] {
    TransformRegistry built;
    transforms_register_containers(built);
    transforms_register_conversions(built);
    transforms_register_resize(built);
    transforms_register_erasing(built);
    transforms_register_geometry(built);
    transforms_register_color(built);
    transforms_register_auto(built);
    transforms_register_boxes(built);
    transforms_register_keypoints(built);
    transforms_register_detection(built);
    transforms_register_channels(built);
    transforms_register_noise(built);
    transforms_register_linear(built);
    transforms_register_jpeg(built);
    transforms_register_elastic(built);
    transforms_register_crop_views(built);
    return built;
  }();
  return registry;
}

} // namespace fastloop
