// The transform pipeline as the CLI and the TOML recipes spell it: torchvision's class names and arguments
// in a Python literal subset, "RandomResizedCrop(224, scale=(0.35, 1)), RandomHorizontalFlip(p=0.5)". The
// parser gives TransformSpecs (transform.h); spec_to_string writes the canonical spelling it reads back.
#pragma once

#include "fastloop/data/transforms/transform.h"

#include <string>
#include <vector>

namespace fastloop {

/// Parses a comma-separated list of transforms (empty text: none). Values: ints, floats (1.5, 1e-3, -2),
/// True/False/None, 'strings' or "strings", tuples and lists, transforms nested in lists
/// (RandomApply([ColorJitter(0.4)], p=0.8)) and dotted names (InterpolationMode.BILINEAR, torch.float32).
/// A syntax error throws InputError naming the character position and what was expected there.
std::vector<TransformSpec> spec_parse(const std::string& text);

} // namespace fastloop
