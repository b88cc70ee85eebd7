// The compiled pipeline of pipeline.h.
#include "fastloop/data/transforms/pipeline.h"

#include "fastloop/data/loader/sampler.h"

namespace fastloop {
namespace {

constexpr uint64_t kStreamCropSalt = 0xc20b, kStreamFlipSalt = 0xf11b;  // the built-in crop and flip streams
constexpr uint64_t kStreamSalt = 0x7a3f;  // + position, from position 2 on: apart from kEraseSalt's 0xe7a5

}  // namespace

Draws pipeline_draws(uint64_t seed, int64_t epoch, int64_t index, int64_t position) {
  const uint64_t salt = position == 0 ? kStreamCropSalt : position == 1 ? kStreamFlipSalt : kStreamSalt + static_cast<uint64_t>(position);
  return Draws(hash_mix(seed ^ salt, static_cast<uint64_t>(epoch), static_cast<uint64_t>(index)));
}

std::vector<TransformPtr> pipeline_make(const std::vector<TransformSpec>& specs) {
  std::vector<TransformPtr> transforms;
  for (const auto& spec : specs) transforms.push_back(transform_registry().make(spec));
  return transforms;
}

std::string pipeline_repr(const std::vector<TransformPtr>& transforms) {
  std::string out;
  for (size_t i = 0; i < transforms.size(); ++i) out += (i ? ", " : "") + transforms[i]->repr();
  return out;
}

} // namespace fastloop
