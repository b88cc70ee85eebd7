// libFuzzer target for the AWS shared credentials / config file reader (aws_ini_parse) and the credential
// chain over it (aws_credentials_resolve with the input as ~/.aws/credentials and ~/.aws/config): any bytes
// must parse or throw InputError, never crash; a key found must come with its secret, and the source it
// names is the profile and the file, never a secret. Input: an INI file (seeds: profiles, comments, nested
// blocks as the AWS CLI writes them).
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/aws_credentials.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const auto& [section, keys] : fastloop::aws_ini_parse(text, "fuzz.ini"))
      for (const auto& [key, value] : keys)
        if (key.empty() || key.find('=') != std::string::npos) std::abort();
  } catch (const fastloop::InputError&) {
  }
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/aws_ini_fuzz_" + std::to_string(::getpid());
  }();
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  const auto env = [](const char* name) -> std::string {
    const std::string n = name;
    if (n == "AWS_SHARED_CREDENTIALS_FILE" || n == "AWS_CONFIG_FILE") return path;
    return n == "HOME" ? "/nonexistent" : "";
  };
  try {
    const fastloop::AwsCredentials c = fastloop::aws_credentials_resolve(env);
    if (!c.access_key.empty() && c.secret_key.empty()) std::abort();
    // The source names the profile and the file only: compared whole, since a short secret may occur in the
    // file's path by chance (CI's "/check/work/main/..." holds "stloop").
    const std::string named = "profile 'default' in " + path;
    if (!c.secret_key.empty() && c.source != named &&
        c.source != named + ", with a session token (refused: it may have expired)")
      std::abort();
  } catch (const fastloop::InputError& e) {
    (void)e;
  }
  return 0;
}
