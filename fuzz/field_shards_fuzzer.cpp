// libFuzzer target for the samples of fields (FieldShards, fastloop.Loader(fields=...)): a shard's members
// grouped by key, each field's member picked, and the workers' checks (UTF-8 text, JSON with a key, whole
// numbers) on any bytes: each must index or throw InputError, every field read must lie inside the shard, a
// sample that passes its checks must give its JSON key's value. Input: the shard itself (seeds: tests/
// fuzz_corpus/field_shards/, small image-caption shards).
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/field_shards.h"
#include "fastloop/data/sources/field_values.h"

#include "fuzz_files.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fastloop::fuzz::ScratchDir scratch;
  const std::string path = scratch / "fuzz.tar";
  fastloop::fuzz::write_file(path, data, size);
  std::vector<fastloop::FieldSpec> fields;
  for (const char* f : {"jpg;png", "txt", "json:caption", "cls", "bin", "seg.png"})
    fields.push_back(fastloop::field_spec_parse(f));
  try {
    const fastloop::FieldShards shards({path}, fields, {true, 4, false});
    std::string unused;
    for (int64_t i = 0; i < shards.size(); ++i) {
      for (size_t f = 0; f < fields.size(); ++f) {
        const auto member = shards.field(i, f);
        if (!member || member->empty()) continue;
        if (member->size() > size) std::abort();
        volatile char first = member->front(), last = member->back();  // inside the mapping, or a crash
        (void)first, (void)last;
      }
      try {
        (void)shards.bytes(i, unused);
      } catch (const fastloop::InputError&) {
        continue;
      }
      if (fastloop::field_json_value(*shards.field(i, 2), "caption").empty()) std::abort();
      for (int64_t part = 1; part < shards.parts(); ++part)  // present once bytes() checked the sample
        if (shards.part_bytes(i, part, unused).size() > size) std::abort();
    }
    if (!shards.epoch_order(1, 0, 0, 2) || !shards.epoch_order(1, 0, 1, 2)) std::abort();
  } catch (const fastloop::InputError&) {
  }
  return 0;
}
