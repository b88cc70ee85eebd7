// dlopen of the system's libcurl (see curl_library.h).
#include "fastloop/data/sources/curl_library.h"

#include "fastloop/core/errors.h"

#include <dlfcn.h>

#include <string>

namespace fastloop {
namespace {

const char* kLibrary = "libcurl.so.4";
const char* kInstall = "install the system's libcurl (Debian/Ubuntu: apt-get install libcurl4; RHEL/Fedora: "
                       "dnf install libcurl); local shards:DIR need no libcurl";

template <typename Function>
void resolve(void* handle, const char* name, Function& out) {
  out = reinterpret_cast<Function>(dlsym(handle, name));
  if (!out) throw RunError(std::string("s3:// and http(s):// shards: ") + kLibrary + " has no " + name + ": " + kInstall);
}

CurlLibrary load() {
  void* handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    throw RunError(std::string("s3:// and http(s):// shards need ") + kLibrary + " (libcurl 7.75 or newer), which "
                   "did not load (" + (why ? why : "not found") + "): " + kInstall);
  }
  CurlLibrary c{};
  decltype(&::curl_version_info) version_info = nullptr;
  resolve(handle, "curl_version_info", version_info);
  const curl_version_info_data* version = version_info(CURLVERSION_NOW);
  if (!version || version->version_num < 0x074B00)
    throw RunError(std::string("s3:// and http(s):// shards need libcurl 7.75 or newer (SigV4 signing); this system's ") +
                   kLibrary + " is " + (version ? version->version : "of an unknown version") + ": " + kInstall);
  resolve(handle, "curl_global_init", c.global_init);
  resolve(handle, "curl_easy_init", c.easy_init);
  resolve(handle, "curl_easy_reset", c.easy_reset);
  resolve(handle, "curl_easy_setopt", c.easy_setopt);
  resolve(handle, "curl_easy_perform", c.easy_perform);
  resolve(handle, "curl_easy_getinfo", c.easy_getinfo);
  resolve(handle, "curl_easy_strerror", c.easy_strerror);
  resolve(handle, "curl_easy_cleanup", c.easy_cleanup);
  resolve(handle, "curl_slist_append", c.slist_append);
  resolve(handle, "curl_slist_free_all", c.slist_free_all);
  if (c.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw RunError(std::string(kLibrary) + ": curl_global_init failed");
  return c;  // the handle stays open for the process's life
}

} // namespace

const CurlLibrary& curl_library() {
  static const CurlLibrary library = load();  // a throw leaves it unset: the next call tries again
  return library;
}

} // namespace fastloop
