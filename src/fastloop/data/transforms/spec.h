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

/// The canonical spelling: "Name(positional, ..., keyword=value, ...)" joined by ", "; sequences as tuples,
/// floats as Python's repr, strings in single quotes. spec_parse(spec_to_string(x)) == x.
std::string spec_to_string(const std::vector<TransformSpec>& specs);
std::string spec_to_string(const TransformSpec& spec);

/// A value as Python's repr writes it (tuples for sequences): "(0.35, 1)", "'random'", "None".
std::string value_repr(const TransformValue& value);

/// Python's repr of a float: the shortest digits that read back the same, "1.0", "0.1", "1e-05".
std::string float_repr(double value);

/// Whether two values / specs are the same as written (the round-trip tests' equality).
bool value_equal(const TransformValue& a, const TransformValue& b);
bool spec_equal(const TransformSpec& a, const TransformSpec& b);

} // namespace fastloop
