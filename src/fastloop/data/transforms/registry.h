// The registry with every operation fastloop runs, by torchvision class name: built once from each family's
// register function (families.h). Its own component, so that the families (Compose and the other
// containers make their children through it) and the transform types stay free of each other.
#pragma once

#include "fastloop/data/transforms/transform.h"

namespace fastloop {

/// The registry with every supported operation (built once, on first use; thread-safe).
const TransformRegistry& transform_registry();

} // namespace fastloop
