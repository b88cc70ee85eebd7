// libFuzzer target for what a remote `shards:` argument and its index hold: the spec split at "::", the brace
// patterns and each URL (remote_spec_split, remote_pattern_expand, remote_url_parse, remote_url_http) and
// the shards.idx text (shard_index_parse). Any bytes must parse or throw InputError, never crash; a URL that
// parses has a scheme, a host or bucket and a key, and its request URL carries no space or control byte.
// Input: the first line is the spec, the rest an index (seeds: the forms of docs/getting-started.md).
// Patterns expand to at most 1,000 URLs here (the limit's own path is what runs past it): a pattern of a
// million names is valid input, but checking each one would spend the run's time on one input.
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/remote_url.h"
#include "fastloop/data/sources/shard_index_file.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const size_t newline = text.find('\n');
  const std::string spec = text.substr(0, newline);
  try {
    std::string train, val;
    fastloop::remote_spec_split(spec, train, val);
    for (const std::string& pattern : {train, val}) {
      if (pattern.empty()) continue;
      for (const fastloop::RemoteUrl& url : fastloop::remote_pattern_expand(pattern, 1000)) {
        if (url.scheme.empty() || url.key.empty() || (url.bucket.empty() && url.host.empty())) std::abort();
        for (const std::string& endpoint : {std::string(), std::string("http://127.0.0.1:9000/")})
          for (unsigned char c : fastloop::remote_url_http(url, endpoint, "us-east-1"))
            if (c <= ' ' || c >= 0x7f) std::abort();
        if (fastloop::remote_url_sibling(url, "shards.idx").text.empty()) std::abort();
      }
    }
  } catch (const fastloop::InputError&) {
  }
  if (newline == std::string::npos) return 0;
  try {
    for (const fastloop::ShardIndexEntry& e : fastloop::shard_index_parse(text.substr(newline + 1), "fuzz.idx"))
      if (e.name.empty() || e.samples <= 0 || e.bytes < 0 || e.name.find('/') != std::string::npos) std::abort();
  } catch (const fastloop::InputError&) {
  }
  return 0;
}
