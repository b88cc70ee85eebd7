// Which image-codec libraries this process decodes with, and from which file: `fastloop doctor` prints them,
// so a user can tell the codecs a wheel bundles (site-packages/fastloop.libs) from the system's.
#pragma once

#include <string>
#include <vector>

namespace fastloop {

struct CodecLibrary {
  std::string name;     // the library, e.g. "libjpeg-turbo (TurboJPEG)"
  std::string formats;  // what fastloop decodes with it, e.g. "JPEG"
  std::string version;  // as the library reports it; empty where it reports none
  std::string path;     // the shared object its code was loaded from; empty when linked statically
};

/// One entry per codec library fastloop's image decoding links, in a fixed order.
std::vector<CodecLibrary> codec_libraries();

/// The shared object holding `address` (a function of it), or "" when none does (a static link).
std::string library_path_of(const void* address);

} // namespace fastloop
