// Video clip batches (see video_batch.h). Each worker thread keeps its decoder and frame buffers
// (thread_local), so a video's file stays open while its clips follow each other.
#include "fastloop/data/transforms/video_batch.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/codecs/video_frames.h"
#include "fastloop/data/sources/video_clips.h"
#include "fastloop/data/transforms/builtin_transforms.h"
#include "fastloop/data/transforms/float_step.h"
#include "fastloop/data/transforms/image_augment.h"
#include "fastloop/data/transforms/pipeline.h"

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

namespace fastloop {
namespace {

constexpr int64_t kSkipTries = 16;  // unreadable videos in a row that bad_image_policy "skip" steps over, as images

struct VideoWork {
  VideoFrameReader reader;
  std::vector<ImageU8> frames;
  TransformScratch scratch;
  DefaultPipeline pipeline;  // the AugmentOptions' pipeline, made from their flags for this thread when none
};

VideoWork& video_work() {
  thread_local VideoWork work;
  return work;
}

void size_check(const std::string& name, int64_t frame, int64_t channels, int64_t height, int64_t width, int64_t H,
                int64_t W) {
  if (channels == 3 && height == H && width == W) return;
  throw InputError(name + ": frame " + std::to_string(frame) + " came out of the transform " + std::to_string(channels) +
                   " x " + std::to_string(height) + " x " + std::to_string(width) + " (C x H x W), but the batch "
                   "holds 3 x " + std::to_string(H) + " x " + std::to_string(W) + ": end the transform with a crop or "
                   "resize to one size (e.g. CenterCrop(" + std::to_string(H) + ")) and 3 channels");
}

// One frame through the value table into its plane of the batch (channels `channel_stride` values apart).
template <typename T>
void frame_write(const ImageU8& image, const T* table, T* out, int64_t channel_stride) {
  const int64_t H = image.height, W = image.width;
  for (int64_t y = 0; y < H; ++y) {
    const uint8_t* px = image.row(y);
    T* r = out + y * W;
    T* g = r + channel_stride;
    T* b = g + channel_stride;
    for (int64_t x = 0; x < W; ++x, px += 3) r[x] = table[px[0]], g[x] = table[256 + px[1]], b[x] = table[512 + px[2]];
  }
}

// The decoded clip (sample `index`, its frames `frames`, in work.frames) through the pipeline into batch slot `b`.
template <typename Out>
void clip_write(const VideoClips& clips, int64_t index, const std::vector<int64_t>& frames, int64_t b,
                const Pipeline& pipeline, const std::vector<Out>& lut, uint64_t seed, int64_t epoch, Out* dst, int64_t H,
                int64_t W, VideoWork& work) {
  const bool cthw = clips.options().channels_first;
  const int64_t frames_out = clips.options().frames(), plane = H * W, channel_stride = cthw ? frames_out * plane : plane;
  const std::string& path = clips.path(index);
  for (int64_t t = 0; t < frames_out; ++t) {
    ImageU8& frame = work.frames[static_cast<size_t>(t)];
    pipeline.run_u8(frame, seed, epoch, index, work.scratch, 0);  // the sample's draws: one per clip
    Out* out = dst + b * 3 * frames_out * plane + t * (cthw ? plane : 3 * plane);
    if (pipeline.float_steps()) {
      const at::Tensor x = pipeline.run_float(frame, nullptr, seed, epoch, index, work.scratch);
      size_check(path, frames[static_cast<size_t>(t)], x.size(0), x.size(1), x.size(2), H, W);
      float_image_write(x, out, channel_stride, W, 1);
      continue;
    }
    size_check(path, frames[static_cast<size_t>(t)], frame.channels, frame.height, frame.width, H, W);
    frame_write<Out>(frame, lut.data(), out, channel_stride);
    pipeline.erase_output(out, 3, H, W, channel_stride, W, 1, seed, epoch, index,
                          [](Out* at, float v) { *at = static_cast<Out>(v); });
  }
}

// The batch's clips. Under bad_image_policy "skip" a clip whose video cannot be read (an InputError from its index
// or its decode, not from the transform) is counted, and the next video's first clip stands in with its own draws,
// deterministically, as the next image stands in for a bad one. Returns the number skipped.
template <typename Out>
int64_t clips_write(const Dataset& dataset, const int64_t* indices, int64_t count, const Pipeline& pipeline,
                    uint64_t seed, int64_t epoch, at::Tensor& images, int64_t* labels, VideoWork& work) {
  const VideoClips& clips = *video_clips_of(dataset);
  const int64_t n = clips.size();
  std::vector<Out> lut;
  for (const float value : pipeline.value_table(3)) lut.push_back(static_cast<Out>(value));  // Tensor::to's rounding
  Out* dst = images.data_ptr<Out>();
  int64_t skipped = 0;
  std::vector<int64_t> frames;
  for (int64_t b = 0; b < count; ++b) {
    int64_t index = indices[b];
    for (int64_t attempt = 0;; ++attempt) {
      try {  // the video's index and frames; the transform's own errors are not the video's
        const std::string& path = clips.path(index);
        frames = clips.sample_frames(index, work.reader.timeline(path), seed, epoch);
        work.reader.read(path, frames, work.frames);
        break;
      } catch (const InputError&) {
        if (!dataset.skip_bad_images) throw;
        if (++skipped, attempt + 1 >= kSkipTries)
          throw InputError("bad_image_policy skip: " + std::to_string(kSkipTries) + " videos in a row from " +
                           clips.path(indices[b]) + " on could not be read; check the videos");
        index = clips.clips_before(clips.video_of(index) + 1) % n;
      }
    }
    clip_write<Out>(clips, index, frames, b, pipeline, lut, seed, epoch, dst, dataset.image_height, dataset.image_width,
                    work);
    labels[b] = clips.label(index);
  }
  return skipped;
}

}  // namespace

const VideoClips* video_clips_of(const Dataset& dataset) {
  return dynamic_cast<const VideoClips*>(dataset.encoded.get());
}

void video_subsample_check(const Dataset& dataset, const Pipeline& pipeline) {
  const int64_t n = pipeline.temporal_subsample();
  const VideoClips* clips = video_clips_of(dataset);
  const std::string uts = "UniformTemporalSubsample(" + std::to_string(n) + ")";
  if (n > 0 && !clips)
    throw TransformTypeError(uts + " picks frames of video clips, and these data are images; drop it");
  // (fastloop.Loader's Python side takes a v2 object out of the pipeline into the clips: then the pipeline has none)
  if (n > 0 && clips && clips->options().subsample != n)
    throw TransformTypeError("the transform takes " + uts + " but the clips were listed with " +
                             (clips->options().subsample > 0 ? std::to_string(clips->options().subsample) + " frames"
                                                             : std::string("none")) +
                             "; in Python give it as a transforms.v2 object (v2.UniformTemporalSubsample(" +
                             std::to_string(n) + ")), which the Loader takes out of the pipeline");
}

int64_t video_batch_assemble(const Dataset& dataset, const int64_t* indices, int64_t count, const AugmentOptions& options,
                             uint64_t seed, int64_t epoch, at::ScalarType dtype, at::Tensor& images, at::Tensor& labels) {
  VideoWork& work = video_work();
  const Pipeline& pipeline = work.pipeline.of(dataset, options);
  pipeline_check_output(pipeline);
  const VideoClipOptions& clip = video_clips_of(dataset)->options();
  const int64_t T = clip.frames(), H = dataset.image_height, W = dataset.image_width;
  images = clip.channels_first ? at::empty({count, 3, T, H, W}, at::TensorOptions().dtype(dtype))
                               : at::empty({count, T, 3, H, W}, at::TensorOptions().dtype(dtype));
  labels = at::empty({count}, at::kLong);
  int64_t* dst_labels = labels.data_ptr<int64_t>();
  switch (dtype) {
    case at::kFloat: return clips_write<float>(dataset, indices, count, pipeline, seed, epoch, images, dst_labels, work);
    case at::kHalf: return clips_write<at::Half>(dataset, indices, count, pipeline, seed, epoch, images, dst_labels, work);
    case at::kBFloat16:
      return clips_write<at::BFloat16>(dataset, indices, count, pipeline, seed, epoch, images, dst_labels, work);
    default: throw InputError("videos: batches are float32, float16 or bfloat16");
  }
}

} // namespace fastloop
