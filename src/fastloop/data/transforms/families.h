// The families of operations, each adding its transforms (torchvision class name, signature, factory) to
// the registry that transform.cpp builds once: one function per file, so adding an operation touches its
// own file only.
#pragma once

#include "fastloop/data/transforms/transform.h"

namespace fastloop {

void transforms_register_containers(TransformRegistry& registry);   // Compose, RandomApply, RandomChoice, RandomOrder
void transforms_register_conversions(TransformRegistry& registry);  // ToTensor, PILToTensor, ToImage, ToDtype, ConvertImageDtype, Normalize
void transforms_register_resize(TransformRegistry& registry);       // RandomResizedCrop, Resize, CenterCrop
void transforms_register_erasing(TransformRegistry& registry);      // RandomErasing
void transforms_register_geometry(TransformRegistry& registry);     // RandomCrop, Pad, flips, RandomRotation, RandomAffine, RandomPerspective, GaussianBlur
void transforms_register_color(TransformRegistry& registry);        // ColorJitter, Grayscale, ..., RandomEqualize
void transforms_register_auto(TransformRegistry& registry);         // AutoAugment, RandAugment, TrivialAugmentWide, AugMix
void transforms_register_boxes(TransformRegistry& registry);        // SanitizeBoundingBoxes, ClampBoundingBoxes, ConvertBoundingBoxFormat
void transforms_register_keypoints(TransformRegistry& registry);    // ClampKeyPoints, SanitizeKeyPoints, SetClampingMode
void transforms_register_detection(TransformRegistry& registry);    // RandomZoomOut, RandomIoUCrop, ..., RandomPhotometricDistort
void transforms_register_channels(TransformRegistry& registry);     // Identity, ToPureTensor, RGB, RandomChannelPermutation
void transforms_register_noise(TransformRegistry& registry);        // GaussianNoise
void transforms_register_linear(TransformRegistry& registry);       // LinearTransformation
void transforms_register_jpeg(TransformRegistry& registry);         // JPEG
void transforms_register_elastic(TransformRegistry& registry);      // ElasticTransform
void transforms_register_crop_views(TransformRegistry& registry);   // FiveCrop, TenCrop (as views: crop_views.h)

} // namespace fastloop
