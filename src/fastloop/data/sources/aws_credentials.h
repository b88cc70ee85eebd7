// Credentials, region and endpoint for s3:// shards, found the way the AWS CLI and SDKs find them:
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, else the profile AWS_PROFILE (default
// "default") of ~/.aws/credentials and ~/.aws/config (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE move
// them); AWS_REGION / AWS_DEFAULT_REGION / the profile's region; AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL /
// the profile's endpoint_url. With no key anywhere, requests go unsigned (public buckets).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace fastloop {

struct AwsCredentials {
  std::string access_key;
  std::string secret_key;      // never printed: messages name `source` instead
  std::string session_token;
  std::string region = "us-east-1";
  std::string endpoint;        // e.g. http://127.0.0.1:8333; empty: AWS's own
  std::string source;          // where the key came from, for messages: "environment (AWS_ACCESS_KEY_ID)",
                               // "profile 'ci' in /root/.aws/credentials", "none (anonymous requests)"

  bool anonymous() const { return access_key.empty(); }
};

/// Sections of an INI file as the AWS CLI reads them: "[name]" headers, "key = value" lines, '#' and ';'
/// comment lines; keys lower-cased, values trimmed; lines before any header and indented continuation
/// lines (nested settings such as "s3 =\n  max_concurrent_requests = 4") are ignored. A line that is none
/// of these throws InputError naming `path` and the line number.
using AwsIni = std::map<std::string, std::map<std::string, std::string>>;
AwsIni aws_ini_parse(std::string_view text, const std::string& path);

/// Reads an environment variable: "" when unset. Tests pass their own.
using EnvLookup = std::function<std::string(const char* name)>;
EnvLookup env_lookup_process();

/// The credential chain above. A profile named by AWS_PROFILE that neither file has, a key id without its
/// secret, or an unreadable file throws InputError naming the variable or file (never a secret).
AwsCredentials aws_credentials_resolve(const EnvLookup& env);

} // namespace fastloop
