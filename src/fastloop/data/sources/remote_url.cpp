// Parsing of s3:// and http(s):// shard URLs and patterns (see remote_url.h).
#include "fastloop/data/sources/remote_url.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/sources/shards.h"

namespace fastloop {
namespace {

constexpr const char* kForms = "expected s3://BUCKET/KEY, http://HOST/PATH or https://HOST/PATH";

[[noreturn]] void fail_url(const std::string& text, const std::string& why) {
  throw InputError("shard URL '" + text.substr(0, 200) + "': " + why + " (" + kForms + ")");
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// S3 bucket names: 3-63 of [a-z0-9.-] (the rule of every S3-compatible store we know); checked so that a
// typo is named here rather than as a signature mismatch.
bool bucket_valid(const std::string& b) {
  if (b.size() < 3 || b.size() > 63) return false;
  for (char c : b)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-')) return false;
  return true;
}

std::string percent_encode(const std::string& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '_' || c == '.' || c == '~' || c == '/';
    if (keep) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

} // namespace

bool remote_url_is_remote(const std::string& text) {
  return starts_with(text, "s3://") || starts_with(text, "http://") || starts_with(text, "https://");
}

RemoteUrl remote_url_parse(const std::string& text) {
  for (unsigned char c : text)
    if (c <= ' ' || c == 0x7f) fail_url(text, "whitespace or a control character in the URL");
  RemoteUrl url;
  url.text = text;
  const size_t colon = text.find("://");
  if (colon == std::string::npos || !remote_url_is_remote(text)) fail_url(text, "not a URL of a known scheme");
  url.scheme = text.substr(0, colon);
  const std::string rest = text.substr(colon + 3);
  const size_t slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  const std::string path = slash == std::string::npos ? "" : rest.substr(slash + 1);
  if (authority.empty()) fail_url(text, url.scheme == "s3" ? "no bucket" : "no host");
  for (unsigned char c : authority)  // IDNs go in their punycode (xn--) form; keys may hold UTF-8 (percent-encoded)
    if (c >= 0x7f) fail_url(text, "a non-ASCII byte in the host; write the host in ASCII (xn--... for an IDN)");
  if (path.empty() || path.back() == '/') fail_url(text, "no object named after the host or bucket");
  if (authority.find_first_of("@?#") != std::string::npos || path.find_first_of("?#") != std::string::npos)
    fail_url(text, "user names, queries and fragments are not taken; credentials come from the AWS environment");
  if (url.scheme == "s3") {
    if (!bucket_valid(authority)) fail_url(text, "'" + authority + "' is not a bucket name (3-63 of a-z 0-9 . -)");
    url.bucket = authority;
  } else {
    url.host = authority;
  }
  url.key = path;
  return url;
}

std::string remote_url_http(const RemoteUrl& url, const std::string& endpoint, const std::string& region) {
  if (url.scheme != "s3") return url.scheme + "://" + url.host + "/" + percent_encode(url.key);
  if (endpoint.empty()) {
    const std::string r = region.empty() ? "us-east-1" : region;
    return "https://" + url.bucket + ".s3." + r + ".amazonaws.com/" + percent_encode(url.key);
  }
  std::string base = endpoint;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/" + url.bucket + "/" + percent_encode(url.key);
}

RemoteUrl remote_url_sibling(const RemoteUrl& url, const std::string& name) {
  RemoteUrl out = url;
  const size_t slash = url.key.rfind('/');
  out.key = (slash == std::string::npos ? "" : url.key.substr(0, slash + 1)) + name;
  const size_t at = url.text.rfind('/');
  out.text = url.text.substr(0, at + 1) + name;
  return out;
}

std::string remote_url_basename(const RemoteUrl& url) {
  const size_t slash = url.key.rfind('/');
  return slash == std::string::npos ? url.key : url.key.substr(slash + 1);
}

std::vector<RemoteUrl> remote_pattern_expand(const std::string& pattern, int64_t max_files) {
  std::vector<RemoteUrl> urls;
  for (const std::string& text : shard_pattern_expand(pattern, max_files)) urls.push_back(remote_url_parse(text));
  return urls;
}

void remote_spec_split(const std::string& arg, std::string& train, std::string& val) {
  const size_t sep = arg.find("::");  // a URL's "://" has one colon
  train = arg.substr(0, sep);
  val = sep == std::string::npos ? "" : arg.substr(sep + 2);
}

} // namespace fastloop
