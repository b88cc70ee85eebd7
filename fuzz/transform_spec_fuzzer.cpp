// libFuzzer target for transform specs (data/transforms/spec.h, pipeline.h): the `--transform` text of the CLI
// and recipes and the eval transform that checkpoints and exports carry. Any text parses or throws InputError;
// what parses prints back (spec_to_string) to text that parses to the same specs, and what compiles into a
// Pipeline has a repr that compiles again to the same repr (the checkpoint's transform is that repr).
#include "fastloop/core/errors.h"
#include "fastloop/data/transforms/pipeline.h"
#include "fastloop/data/transforms/spec.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const char* what, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "%s:\n  %s\n  %s\n", what, a.c_str(), b.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<fastloop::TransformSpec> specs;
  try {
    specs = fastloop::spec_parse(text);
  } catch (const fastloop::InputError&) {
    return 0;
  }
  // The printed spelling must parse (no InputError allowed here) to the same specs and print the same again.
  const std::string printed = fastloop::spec_to_string(specs);
  const std::vector<fastloop::TransformSpec> again = fastloop::spec_parse(printed);
  if (again.size() != specs.size()) fail("spec_to_string round trip changed the count", text, printed);
  for (size_t i = 0; i < specs.size(); ++i)
    if (!fastloop::spec_equal(specs[i], again[i])) fail("spec_to_string round trip changed a spec", text, printed);
  if (fastloop::spec_to_string(again) != printed) fail("spec_to_string is not stable", printed, fastloop::spec_to_string(again));
  // Compiling: an unsupported or out-of-range argument is an InputError (TransformTypeError is one).
  std::string repr;
  try {
    repr = fastloop::Pipeline(text).repr();
  } catch (const fastloop::InputError&) {
    return 0;
  }
  // A compiled pipeline's repr is what a checkpoint stores: it must compile back to itself.
  std::string repr_again;
  try {
    repr_again = fastloop::Pipeline(repr).repr();
  } catch (const fastloop::InputError& e) {
    fail("a compiled pipeline's repr does not compile", repr, e.what());
  }
  if (repr_again != repr) fail("a compiled pipeline's repr compiles to another repr", repr, repr_again);
  return 0;
}
