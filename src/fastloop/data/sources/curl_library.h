// libcurl, opened when the first s3:// or http(s):// source fetches (dlopen of the system's libcurl.so.4), not
// linked. The binary wheel then carries no TLS stack of its own: the system's libcurl keeps the system's CA
// certificates, TLS library and proxy settings (a libcurl bundled from Debian would look for Debian's CA file on
// RHEL), the wheel stays at the image codecs' size and glibc floor, and a machine without libcurl runs
// everything but remote shards, whose first fetch says what to install.
#pragma once

#include <curl/curl.h>

namespace fastloop {

// The entry points http_fetch.cpp calls, resolved from the loaded library.
struct CurlLibrary {
  decltype(&::curl_global_init) global_init;
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_reset) easy_reset;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_perform) easy_perform;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
};

// The loaded libcurl, once per process (curl_global_init done). Throws RunError naming the library and how to
// install it when libcurl.so.4 is missing, lacks an entry point, or is older than 7.75 (SigV4 signing).
const CurlLibrary& curl_library();

} // namespace fastloop
