// One sample decoded and through a pipeline's uint8 transforms (image_sample.h).
#include "fastloop/data/transforms/image_sample.h"

#include "fastloop/data/transforms/draws.h"

#include <algorithm>
#include <cstring>

namespace fastloop {
namespace {

// `box` of a full-scale height x width image, in the pixels of its decode at decoded_h x decoded_w.
CropBox box_scaled(const CropBox& box, int64_t height, int64_t width, int64_t decoded_h, int64_t decoded_w) {
  if (decoded_h == height && decoded_w == width) return box;
  const double fy = static_cast<double>(decoded_h) / height, fx = static_cast<double>(decoded_w) / width;
  CropBox out;
  out.top = std::min<int64_t>(decoded_h - 1, py_round(box.top * fy));
  out.left = std::min<int64_t>(decoded_w - 1, py_round(box.left * fx));
  out.height = std::clamp<int64_t>(py_round((box.top + box.height) * fy) - out.top, 1, decoded_h - out.top);
  out.width = std::clamp<int64_t>(py_round((box.left + box.width) * fx) - out.left, 1, decoded_w - out.left);
  return out;
}

// The plan's box in the pixels of the image decoded at `scale`.
CropBox fused_box(const ImageInfo& info, const ImageScale& scale, const ResizePlan& plan) {
  return box_scaled({plan.top, plan.left, plan.height, plan.width}, info.height, info.width, scale.apply(info.height),
                    scale.apply(info.width));
}

// head's resize of `want` (pixels of `decoded`'s scale; `decoded` holds the part it reads) into work.image.
void fused_resize(const RgbImage& decoded, const CropBox& want, const FusedHead& head, ImageWork& work) {
  work.image.reshape(head.window.height, head.window.width, 3);
  work.resizer.resize(decoded, want, head.plan.out_height, head.plan.out_width, head.window, work.image.data(),
                      head.window.width * 3);
}

// A whole decoded image as work.image, for a pipeline that begins with something else than a crop or resize.
void image_copy(const RgbImage& whole, ImageWork& work) {
  work.image.reshape(whole.height, whole.width, 3);
  std::memcpy(work.image.data(), whole.data, static_cast<size_t>(work.image.bytes()));
}

}  // namespace

ImageWork& image_work() {
  thread_local ImageWork work;
  return work;
}

bool fused_head(const Pipeline& pipeline, const ImageInfo& info, uint64_t seed, int64_t epoch, int64_t index,
                FusedHead& head) {
  const ResizePlanTransform* first = pipeline.head();
  if (!first) return false;
  Draws draws = pipeline_draws(seed, epoch, index, 0);
  head.plan = first->plan(info.height, info.width, draws);
  if (!head.plan.exact || head.plan.interpolation != Interpolation::kBilinear || !head.plan.antialias) return false;
  head.window = {0, 0, head.plan.out_height, head.plan.out_width};
  head.next = 1;
  if (const ResizePlanTransform* crop = pipeline.head_crop()) {
    Draws crop_draws = pipeline_draws(seed, epoch, index, 1);
    const ResizePlan c = crop->plan(head.plan.out_height, head.plan.out_width, crop_draws);
    if (c.exact && c.height == c.out_height && c.width == c.out_width)
      head.window = {c.top, c.left, c.height, c.width}, head.next = 2;
  }
  return true;
}

// The scale to decode at for the plan's resize: full scale, whose pixels are torchvision's decode_image's; with
// `fast`, the smallest JPEG DCT scale that covers it (1/2, 1/4 or 1/8 of the pixels per side to decode and
// resize, but libjpeg-turbo's scaled IDCT averages each block instead of the antialiased resize's weights: a
// few levels off, docs/python.md). Other formats decode at full scale.
ImageScale fused_scale(const ImageInfo& info, const ResizePlan& plan, bool fast) {
  if (!fast || info.format != ImageFormat::kJpeg) return {};
  return image_scale_at_least(std::max(static_cast<double>(plan.out_height) / plan.height,
                                       static_cast<double>(plan.out_width) / plan.width));
}

DecodePlan decode_plan(const ImageInfo& info, const Pipeline& pipeline, uint64_t seed, int64_t epoch, int64_t index,
                       bool fast, ImageResizer& resizer) {
  DecodePlan d;
  d.fused = fused_head(pipeline, info, seed, epoch, index, d.head);
  if (!d.fused) return d;
  const FusedHead& head = d.head;
  d.scale = fused_scale(info, head.plan, fast);
  d.want = fused_box(info, d.scale, head.plan);
  const PixelRect& window = head.window;
  const bool whole = window.top == 0 && window.left == 0 && window.height == head.plan.out_height &&
                     window.width == head.plan.out_width;
  d.needed = whole ? d.want : resizer.source_rect(d.want, head.plan.out_height, head.plan.out_width, window);
  return d;
}

// Sample `index` through the pipeline's uint8 transforms into work.image: a fused head decodes only the part
// of the image its window reads (fast: at the smallest scale that covers it); anything else decodes the whole
// image.
void sample_image(const Dataset& dataset, int64_t index, const Pipeline& pipeline, uint64_t seed, int64_t epoch,
                  bool fast, ImageWork& work, int64_t part) {
  const std::string_view bytes = part == 0 ? dataset.encoded->bytes(index, work.file)
                                           : dataset.encoded->part_bytes(index, part, work.file);
  work.parts_taken = part + 1;
  const std::string name = dataset.encoded->name(index);
  const ImageInfo info = work.decoder.info(bytes, name);
  ++work.decodes;
  const DecodePlan d = decode_plan(info, pipeline, seed, epoch, index, fast, work.resizer);
  if (d.fused) {
    fused_resize(work.decoder.decode_region(bytes, name, info, d.scale, d.needed), d.want, d.head, work);
    pipeline.run_u8(work.image, seed, epoch, index, work.scratch, d.head.next);
    return;
  }
  image_copy(work.decoder.decode(bytes, name, info, ImageScale{}), work);
  pipeline.run_u8(work.image, seed, epoch, index, work.scratch, 0);
}

// One view of a shared decode through its pipeline's uint8 transforms into work.image.
void view_image(const SharedDecode& decoded, const Pipeline& pipeline, uint64_t seed, int64_t epoch, int64_t index,
                ImageWork& work) {
  FusedHead head;
  if (fused_head(pipeline, decoded.info, seed, epoch, index, head)) {
    fused_resize(decoded.image, fused_box(decoded.info, decoded.scale, head.plan), head, work);
    pipeline.run_u8(work.image, seed, epoch, index, work.scratch, head.next);
    return;
  }
  image_copy(decoded.image, work);  // at full scale: views_decode saw this view
  pipeline.run_u8(work.image, seed, epoch, index, work.scratch, 0);
}

}  // namespace fastloop
