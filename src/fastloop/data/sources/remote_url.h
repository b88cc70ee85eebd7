// Where a remote shard lives: `s3://BUCKET/KEY` (an S3-compatible store, reached at AWS_ENDPOINT_URL or AWS's
// own endpoint) or `http(s)://HOST/PATH`, with the brace patterns and the `TRAIN::VAL` split of local shards.
// Parsing only; fetching is http_fetch.h, credentials aws_credentials.h.
#pragma once

#include "fastloop/data/sources/shards.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

struct RemoteUrl {
  std::string text;    // as the user wrote it (s3://b/k or https://h/p): what messages name
  std::string scheme;  // "s3", "http" or "https"
  std::string bucket;  // s3 only
  std::string key;     // s3: the object key; http(s): the path after the host, without the leading '/'
  std::string host;    // http(s) only: host[:port]
};

/// Whether `text` starts with s3://, http:// or https://.
bool remote_url_is_remote(const std::string& text);

/// Parses one URL. Throws InputError naming `text` and the expected forms for anything else: another scheme,
/// no bucket or host, an empty key or path, whitespace or control characters.
RemoteUrl remote_url_parse(const std::string& text);

/// The http(s) URL a GET of `url` goes to. s3: `endpoint` (AWS_ENDPOINT_URL, e.g. http://127.0.0.1:8333)
/// + "/BUCKET/KEY" (path style, what MinIO, SeaweedFS and Ceph answer); with no endpoint AWS's own
/// virtual-hosted https://BUCKET.s3.REGION.amazonaws.com/KEY. Key characters outside RFC 3986's unreserved
/// set and '/' are percent-encoded, as SigV4 signs them.
std::string remote_url_http(const RemoteUrl& url, const std::string& endpoint, const std::string& region);

/// `url` with its last path component replaced by `name` (the index or classes.txt beside a shard).
RemoteUrl remote_url_sibling(const RemoteUrl& url, const std::string& name);

/// The last path component of `url` (train-000000.tar).
std::string remote_url_basename(const RemoteUrl& url);

/// Every URL a remote shard pattern names, in order: braces expand as for local shards
/// (shard_pattern_expand: "{000000..000099}", "{a,b}", at most `max_files`), each result parsed by
/// remote_url_parse.
std::vector<RemoteUrl> remote_pattern_expand(const std::string& pattern, int64_t max_files = kShardPatternMaxFiles);

/// A `shards:` argument split at its `::` into the train pattern and the val pattern ("" when there is
/// none), as for local shards; the "://" of a URL is never taken for the separator.
void remote_spec_split(const std::string& arg, std::string& train, std::string& val);

} // namespace fastloop
