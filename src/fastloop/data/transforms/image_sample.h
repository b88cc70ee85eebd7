// One sample of encoded images decoded and run through a pipeline's uint8 transforms, as the loader's
// workers do it (image_augment.cpp assembles batches from them): a pipeline that begins with a crop or
// resize has the decode take that over (only the region it reads, at full scale or with `fast` at the
// smallest JPEG DCT scale that covers it); else the whole image is decoded. Each worker thread keeps its
// decoder, resizer, file buffer, image and scratch here across samples (image_work()).
#pragma once

#include "fastloop/data/codecs/image_decode.h"
#include "fastloop/data/sources/dataset.h"
#include "fastloop/data/transforms/builtin_transforms.h"
#include "fastloop/data/transforms/image_resize.h"
#include "fastloop/data/transforms/pipeline.h"

#include <cstdint>
#include <string>

namespace fastloop {

/// A worker thread's decoder, resizer and buffers, grown once and kept.
struct ImageWork {
  ImageDecoder decoder;
  ImageResizer resizer;
  std::string file;             // the encoded bytes of the current sample
  ImageU8 image;                // the sample through the pipeline's uint8 transforms
  TransformScratch scratch;
  DefaultPipeline pipeline;     // the AugmentOptions' pipeline, made from their flags for this thread when none
  int64_t decodes = 0;          // images this thread decoded (AssembleCounts::decoded)
  int64_t parts_taken = 0;      // parts of the current sample whose bytes were taken (EncodedImages::read_dropped)
};

/// This thread's ImageWork.
ImageWork& image_work();

// A leading crop or resize that the decode takes over (bilinear, antialiased: the resizer's kernel): its plan,
// the window of its output to compute (a CenterCrop right after a Resize, eval's), and the position of the
// first transform left to run. False when the pipeline begins otherwise (the whole image is decoded).
struct FusedHead {
  ResizePlan plan;
  PixelRect window;
  size_t next = 1;
};

bool fused_head(const Pipeline& pipeline, const ImageInfo& info, uint64_t seed, int64_t epoch, int64_t index,
                FusedHead& head);

/// The scale to decode at for the plan's resize: full scale; with `fast`, for a JPEG, the smallest DCT scale
/// that covers it.
ImageScale fused_scale(const ImageInfo& info, const ResizePlan& plan, bool fast);

// What one sample's decode is: with a fused head, the scale, the box its resize reads (`want`, pixels at that
// scale) and the part of the image to decode (`needed`); without one, the whole image at full scale.
struct DecodePlan {
  FusedHead head;
  bool fused = false;
  ImageScale scale;
  CropBox want;
  PixelRect needed;
};

DecodePlan decode_plan(const ImageInfo& info, const Pipeline& pipeline, uint64_t seed, int64_t epoch, int64_t index,
                       bool fast, ImageResizer& resizer);

/// Sample `index` (its image `part`: EncodedImages::part_bytes) through the pipeline's uint8 transforms into
/// work.image (one decode, counted in work.decodes).
void sample_image(const Dataset& dataset, int64_t index, const Pipeline& pipeline, uint64_t seed, int64_t epoch,
                  bool fast, ImageWork& work, int64_t part = 0);

// Sample `index` read and decoded once for every view, the whole image (a view's resize then reads its box of
// it): at full scale, or with `fast` at the finest scale a view's fused head needs (a view without one needs
// full scale).
struct SharedDecode {
  ImageInfo info;
  ImageScale scale;
  RgbImage image;
};

/// One view of a shared decode through its pipeline's uint8 transforms into work.image.
void view_image(const SharedDecode& decoded, const Pipeline& pipeline, uint64_t seed, int64_t epoch, int64_t index,
                ImageWork& work);

}  // namespace fastloop
