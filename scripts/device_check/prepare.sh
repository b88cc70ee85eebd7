# shellcheck shell=bash
# `scripts/device_check.sh --prepare` (sourced): copies into prepared/ (git-ignored, carried to the GPU
# machine) what the GPU image lacks: GoogleTest sources, CLI11, nlohmann-json, toml++, gloo and zlib
# headers, Debian's libz.so.1, libturbojpeg, libjpeg, libspng, libwebp, libwebpdemux, libtiff and libsimdjson (headers and the
# shared libraries; libtiff's own dependencies beside it, cmake/Prepared.cmake says why), and the
# Fashion-MNIST files. About 45 MB.
# Needs: PREPARED.

prepare_sources=(/usr/src/googletest/CMakeLists.txt /usr/include/CLI/CLI.hpp /usr/include/nlohmann/json.hpp
                 /usr/include/toml++/toml.h /usr/include/gloo/config.h /usr/include/zlib.h /usr/include/turbojpeg.h
                 /usr/include/jpeglib.h /usr/include/spng.h /usr/include/webp/demux.h
                 /usr/include/x86_64-linux-gnu/tiffio.h /usr/include/simdjson.h /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz)

# libtiff's dependencies that a bare image may lack (libc, libm, libz, libstdc++ and libgcc_s it has);
# libjpeg and libwebp are copied for their own sake too.
tiff_needs() { ldd "$(library_file libtiff.so.6)" | awk '$3 ~ /^\// {print $1}' | grep -v -E '^(libc|libm|libz|libstdc\+\+|libgcc_s)\.so'; }

# The file a library's soname resolves to here (copied without the symlink). awk reads to the end: one that
# exited at the match would kill ldconfig with SIGPIPE mid-listing, and pipefail fails the step (exit 141).
library_file() { ldconfig -p | awk -v name="$1" '!found && $1 == name && /x86-64/ {print $NF; found = 1}'; }

prepare() {
  set -e
  local missing=() f
  for f in "${prepare_sources[@]}"; do [ -e "$f" ] || missing+=("$f"); done
  if ((${#missing[@]})); then
    echo "device_check --prepare: missing ${missing[*]}; run scripts/setup.sh first (it installs the Debian" \
         "packages these come from)" >&2
    exit 1
  fi
  rm -rf "$PREPARED.tmp"
  local p=$PREPARED.tmp
  mkdir -p "$p/googletest" "$p/cli11/include" "$p/nlohmann_json/include" "$p/tomlplusplus/include" \
           "$p/gloo/include" "$p/zlib/include" "$p/zlib/lib" "$p/turbojpeg/include" "$p/turbojpeg/lib" \
           "$p/jpeg/include" "$p/jpeg/lib" \
           "$p/spng/include" "$p/spng/lib" "$p/webp/include/webp" "$p/webp/lib" "$p/webpdemux/include/webp" \
           "$p/webpdemux/lib" "$p/tiff/include" "$p/tiff/lib" "$p/simdjson/include" "$p/simdjson/lib" "$p/fashion-mnist"
  # GoogleTest: the top-level CMakeLists and googletest/ (gmock is not used; BUILD_GMOCK=OFF).
  cp -a /usr/src/googletest/CMakeLists.txt /usr/src/googletest/googletest "$p/googletest/"
  cp -a /usr/include/CLI "$p/cli11/include/"
  cp -a /usr/include/nlohmann "$p/nlohmann_json/include/"
  cp -a /usr/include/toml++ "$p/tomlplusplus/include/"
  cp -a /usr/include/gloo "$p/gloo/include/"
  cp -a /usr/include/zlib.h /usr/include/zconf.h "$p/zlib/include/"
  # Debian's libz.a is not position-independent (libfastloop is a shared library), so the build links the
  # image's own runtime libz.so.1; this copy (resolved, no symlink) is only the fallback if it has none.
  cp -L "$(library_file libz.so.1)" "$p/zlib/lib/libz.so.1"
  cp -a /usr/include/turbojpeg.h "$p/turbojpeg/include/"
  cp -L "$(library_file libturbojpeg.so.0)" "$p/turbojpeg/lib/libturbojpeg.so.0"
  ln -s libturbojpeg.so.0 "$p/turbojpeg/lib/libturbojpeg.so"
  # jpeglib.h with the headers it includes (jconfig.h is Debian's per-architecture one).
  cp -a /usr/include/jpeglib.h /usr/include/jmorecfg.h /usr/include/jerror.h "$p/jpeg/include/"
  cp -L "$(dpkg -L libjpeg62-turbo-dev | awk '!found && /\/jconfig\.h$/ {print; found = 1}')" "$p/jpeg/include/jconfig.h"
  cp -L "$(library_file libjpeg.so.62)" "$p/jpeg/lib/libjpeg.so.62"
  ln -s libjpeg.so.62 "$p/jpeg/lib/libjpeg.so"
  cp -a /usr/include/spng.h "$p/spng/include/"
  cp -L "$(library_file libspng.so.0)" "$p/spng/lib/libspng.so.0"
  ln -s libspng.so.0 "$p/spng/lib/libspng.so"
  cp -a /usr/include/webp/decode.h /usr/include/webp/types.h "$p/webp/include/webp/"
  cp -L "$(library_file libwebp.so.7)" "$p/webp/lib/libwebp.so.7"
  cp -a /usr/include/webp/demux.h /usr/include/webp/mux_types.h /usr/include/webp/decode.h /usr/include/webp/types.h \
    "$p/webpdemux/include/webp/"
  cp -L "$(library_file libwebpdemux.so.2)" "$p/webpdemux/lib/libwebpdemux.so.2"
  # tiffio.h with tiff.h, tiffvers.h and Debian's per-architecture tiffconf.h.
  cp -a /usr/include/x86_64-linux-gnu/tiff.h /usr/include/x86_64-linux-gnu/tiffio.h /usr/include/x86_64-linux-gnu/tiffvers.h \
    /usr/include/x86_64-linux-gnu/tiffconf.h "$p/tiff/include/"
  cp -L "$(library_file libtiff.so.6)" "$p/tiff/lib/libtiff.so.6"
  local dep
  for dep in $(tiff_needs); do cp -L "$(library_file "$dep")" "$p/tiff/lib/$dep"; done
  # simdjson (COCO annotation files): its one header and the library its soname names (libsimdjson.so.14 on Debian 12).
  cp -a /usr/include/simdjson.h "$p/simdjson/include/"
  local simdjson_so
  simdjson_so="$(ldconfig -p | awk '!found && $1 ~ /^libsimdjson\.so\.[0-9]+$/ && /x86-64/ {print $1; found = 1}')"
  cp -L "$(library_file "$simdjson_so")" "$p/simdjson/lib/$simdjson_so"
  cp -a /usr/share/datasets/fashion-mnist/*-ubyte.gz "$p/fashion-mnist/"
  {
    echo "# prepared/ for scripts/device_check.sh (git-ignored; carried to the GPU machine)"
    echo "# made $(date -u +%FT%TZ) on $(. /etc/os-release; echo "$PRETTY_NAME")"
    for pkg in googletest libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libgloo-dev zlib1g-dev zlib1g \
               libturbojpeg0-dev libjpeg62-turbo-dev libspng-dev libwebp-dev libtiff-dev libsimdjson-dev dataset-fashion-mnist; do
      echo "$pkg $(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null)"
    done
  } > "$p/MANIFEST"
  rm -rf "$PREPARED"
  mv "$p" "$PREPARED"
  (cd "$PREPARED" && du -sh -- * | sed 's/^/  /')
  local bytes
  bytes=$(du -sb "$PREPARED" | cut -f1)
  echo "prepared/: $((bytes / 1024 / 1024)) MiB ($bytes bytes) in all; the limit for what travels is 64 MiB"
  if ((bytes > 60 * 1024 * 1024)); then
    echo "device_check --prepare: prepared/ is over 60 MiB, too close to the 64 MiB the tree may carry" >&2
    exit 1
  fi
}
