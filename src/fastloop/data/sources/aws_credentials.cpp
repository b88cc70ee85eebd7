// The AWS credential chain for s3:// shards (see aws_credentials.h).
#include "fastloop/data/sources/aws_credentials.h"

#include "fastloop/core/errors.h"
#include "fastloop/core/text.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace fastloop {
namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return std::string(s);
}

// The file's text, or nullopt-like "" with `found` false when it does not exist.
bool read_file(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream all;
  all << in.rdbuf();
  if (in.bad()) throw InputError(path + ": cannot be read (AWS credentials or config file)");
  text = all.str();
  return true;
}

struct Profile {
  const std::map<std::string, std::string>* credentials = nullptr;  // its section in the credentials file
  const std::map<std::string, std::string>* config = nullptr;       // its section in the config file
  std::string get(const std::string& key) const {
    for (const auto* section : {credentials, config}) {
      if (!section) continue;
      const auto it = section->find(key);
      if (it != section->end() && !it->second.empty()) return it->second;
    }
    return "";
  }
};

} // namespace

AwsIni aws_ini_parse(std::string_view text, const std::string& path) {
  AwsIni ini;
  std::map<std::string, std::string>* section = nullptr;
  int64_t number = 0;
  bool nested = false;  // inside "key =" with an empty value: indented lines belong to it
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view raw = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    const bool indented = raw[0] == ' ' || raw[0] == '\t';
    if (indented && (nested || !section)) continue;
    if (line[0] == '[') {
      if (line.back() != ']' || line.size() < 3)
        throw InputError(path + ": line " + std::to_string(number) + ": a section header is '[name]'");
      section = &ini[trim(std::string_view(line).substr(1, line.size() - 2))];
      nested = false;
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError(path + ": line " + std::to_string(number) + ": expected 'key = value' or '[section]'");
    if (!section) continue;  // settings before any section: the AWS CLI ignores them too
    const std::string value = trim(std::string_view(line).substr(eq + 1));
    nested = value.empty();
    (*section)[ascii_lower(trim(std::string_view(line).substr(0, eq)))] = value;
  }
  return ini;
}

EnvLookup env_lookup_process() {
  return [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v ? v : "");
  };
}

AwsCredentials aws_credentials_resolve(const EnvLookup& env) {
  const std::string home = env("HOME");
  std::string credentials_path = env("AWS_SHARED_CREDENTIALS_FILE");
  std::string config_path = env("AWS_CONFIG_FILE");
  if (credentials_path.empty() && !home.empty()) credentials_path = home + "/.aws/credentials";
  if (config_path.empty() && !home.empty()) config_path = home + "/.aws/config";
  const std::string profile_name = env("AWS_PROFILE").empty() ? "default" : env("AWS_PROFILE");

  AwsIni credentials_ini, config_ini;
  std::string text;
  const bool have_credentials = !credentials_path.empty() && read_file(credentials_path, text);
  if (have_credentials) credentials_ini = aws_ini_parse(text, credentials_path);
  const bool have_config = !config_path.empty() && read_file(config_path, text);
  if (have_config) config_ini = aws_ini_parse(text, config_path);
  Profile profile;
  if (auto it = credentials_ini.find(profile_name); it != credentials_ini.end()) profile.credentials = &it->second;
  const std::string config_section = profile_name == "default" ? "default" : "profile " + profile_name;
  if (auto it = config_ini.find(config_section); it != config_ini.end()) profile.config = &it->second;
  if (!env("AWS_PROFILE").empty() && !profile.credentials && !profile.config)
    throw InputError("AWS_PROFILE=" + profile_name + ": no [" + profile_name + "] in " +
                     (credentials_path.empty() ? "~/.aws/credentials" : credentials_path) + " and no [" +
                     config_section + "] in " + (config_path.empty() ? "~/.aws/config" : config_path) +
                     "; name a profile those files have, or unset AWS_PROFILE");

  AwsCredentials c;
  if (!env("AWS_ACCESS_KEY_ID").empty()) {
    c.access_key = env("AWS_ACCESS_KEY_ID");
    c.secret_key = env("AWS_SECRET_ACCESS_KEY");
    c.session_token = env("AWS_SESSION_TOKEN");
    c.source = "environment (AWS_ACCESS_KEY_ID)";
    if (c.secret_key.empty())
      throw InputError("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not; set both, or neither for "
                       "the profile in ~/.aws/credentials or anonymous access");
  } else if (!profile.get("aws_access_key_id").empty()) {
    c.access_key = profile.get("aws_access_key_id");
    c.secret_key = profile.get("aws_secret_access_key");
    c.session_token = profile.get("aws_session_token");
    const bool in_credentials = profile.credentials && profile.credentials->count("aws_access_key_id");
    c.source = "profile '" + profile_name + "' in " + (in_credentials ? credentials_path : config_path);
    if (c.secret_key.empty())
      throw InputError(c.source + " has aws_access_key_id but no aws_secret_access_key; add it");
  } else {
    c.source = "none (anonymous requests: no AWS_ACCESS_KEY_ID and no key in profile '" + profile_name + "')";
  }
  if (!c.session_token.empty()) c.source += ", with a session token (refused: it may have expired)";
  for (const std::string& r : {env("AWS_REGION"), env("AWS_DEFAULT_REGION"), profile.get("region")})
    if (!r.empty()) {
      c.region = r;
      break;
    }
  for (const std::string& e : {env("AWS_ENDPOINT_URL_S3"), env("AWS_ENDPOINT_URL"), profile.get("endpoint_url")})
    if (!e.empty()) {
      c.endpoint = e;
      break;
    }
  if (!c.endpoint.empty() && c.endpoint.rfind("http://", 0) != 0 && c.endpoint.rfind("https://", 0) != 0)
    throw InputError("AWS endpoint '" + c.endpoint + "' (AWS_ENDPOINT_URL or the profile's endpoint_url): "
                     "expected http://HOST[:PORT] or https://HOST[:PORT]");
  return c;
}

} // namespace fastloop
