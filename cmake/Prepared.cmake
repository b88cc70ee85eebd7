# Dependencies: the system's packages first (Debian: zlib1g-dev, libcli11-dev, nlohmann-json3-dev,
# libtomlplusplus-dev, libgtest-dev, libgloo-dev), else the copies that `scripts/device_check.sh --prepare`
# gathers into prepared/ for machines without those packages and without a network (the GPU machine).
# The fallbacks define the targets the packages would (ZLIB::ZLIB, CLI11::CLI11,
# nlohmann_json::nlohmann_json, tomlplusplus::tomlplusplus, GTest::gtest, GTest::gtest_main), so the rest
# of the build does not know which it got. FASTLOOP_USE_PREPARED=ON takes the prepared copies even where
# the packages are installed: CI configures that way so the fallback cannot rot.
#
# Included once from the top-level CMakeLists.txt; tests/CMakeLists.txt calls fastloop_find_gtest().
option(FASTLOOP_USE_PREPARED "Use the dependencies in prepared/ (scripts/device_check.sh --prepare) even where the system has them" OFF)
set(FASTLOOP_PREPARED_DIR "${CMAKE_CURRENT_SOURCE_DIR}/prepared" CACHE PATH
  "Folder filled by scripts/device_check.sh --prepare")

function(_fastloop_prepared_missing what)
  message(FATAL_ERROR "fastloop: ${what} not found: install the system package (scripts/setup.sh does) "
    "or run scripts/device_check.sh --prepare to gather a copy into ${FASTLOOP_PREPARED_DIR}")
endfunction()

# A header-only library's target over prepared/<name>/include.
function(_fastloop_prepared_headers target name probe)
  set(_inc "${FASTLOOP_PREPARED_DIR}/${name}/include")
  if(NOT EXISTS "${_inc}/${probe}")
    _fastloop_prepared_missing("${target} (${probe})")
  endif()
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_inc}")
  message(STATUS "fastloop: ${target} from ${_inc}")
endfunction()

# --- zlib: headers from prepared/zlib/include; the library is the system's runtime libz.so.1 (every
# Linux image has it, also without zlib1g-dev), else prepared/zlib/lib/libz.so.1 (Debian's). Debian's
# libz.a cannot be used: it is not position-independent and libfastloop is a shared library.
if(NOT FASTLOOP_USE_PREPARED)
  find_package(ZLIB)
endif()
if(NOT TARGET ZLIB::ZLIB)
  if(NOT EXISTS "${FASTLOOP_PREPARED_DIR}/zlib/include/zlib.h")
    _fastloop_prepared_missing("zlib (zlib.h)")
  endif()
  find_library(FASTLOOP_ZLIB_LIBRARY NAMES z libz.so.1)
  if(NOT FASTLOOP_ZLIB_LIBRARY)
    find_library(FASTLOOP_ZLIB_LIBRARY NAMES libz.so.1 PATHS "${FASTLOOP_PREPARED_DIR}/zlib/lib" NO_DEFAULT_PATH)
  endif()
  if(NOT FASTLOOP_ZLIB_LIBRARY)
    _fastloop_prepared_missing("zlib (libz.so.1)")
  endif()
  add_library(ZLIB::ZLIB UNKNOWN IMPORTED GLOBAL)
  set_target_properties(ZLIB::ZLIB PROPERTIES IMPORTED_LOCATION "${FASTLOOP_ZLIB_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${FASTLOOP_PREPARED_DIR}/zlib/include")
  message(STATUS "fastloop: zlib headers from ${FASTLOOP_PREPARED_DIR}/zlib/include, library ${FASTLOOP_ZLIB_LIBRARY}")
endif()

# --- header-only libraries ---
if(NOT FASTLOOP_USE_PREPARED)
  find_package(CLI11 CONFIG QUIET)
  find_package(nlohmann_json 3 QUIET)
  find_package(tomlplusplus QUIET)
endif()
if(NOT TARGET CLI11::CLI11)
  _fastloop_prepared_headers(CLI11::CLI11 cli11 CLI/CLI.hpp)
endif()
if(NOT TARGET nlohmann_json::nlohmann_json)
  _fastloop_prepared_headers(nlohmann_json::nlohmann_json nlohmann_json nlohmann/json.hpp)
endif()
if(NOT TARGET tomlplusplus::tomlplusplus)
  _fastloop_prepared_headers(tomlplusplus::tomlplusplus tomlplusplus toml++/toml.h)
endif()

# --- libturbojpeg, libjpeg, libspng, libwebp, libwebpdemux and libtiff (image decoding): pkg-config's
# answer (Debian libturbojpeg0-dev, libjpeg62-turbo-dev, libspng-dev, libwebp-dev, libtiff-dev),
# else prepared/<name>/{include,lib}: the headers and the shared library. The GPU image has neither the
# packages nor, perhaps, pkg-config itself. libtiff needs more than libc, libm and libz (libLerc, libjbig,
# libdeflate, libzstd, liblzma, libwebp, libjpeg): prepared/tiff/lib holds those too, and they are linked
# as direct dependencies, so that the loader finds them through the build's run path.
function(_fastloop_c_library target module name header soname)
  if(NOT FASTLOOP_USE_PREPARED)
    find_package(PkgConfig QUIET)
    if(PKG_CONFIG_FOUND)
      pkg_check_modules(_${name} QUIET IMPORTED_TARGET GLOBAL ${module})
    endif()
    if(TARGET PkgConfig::_${name})
      add_library(${target} ALIAS PkgConfig::_${name})
      return()
    endif()
  endif()
  set(_dir "${FASTLOOP_PREPARED_DIR}/${name}")
  if(NOT EXISTS "${_dir}/include/${header}" OR NOT EXISTS "${_dir}/lib/${soname}")
    _fastloop_prepared_missing("${module} (${header}, ${soname})")
  endif()
  add_library(${target} SHARED IMPORTED GLOBAL)
  file(GLOB _deps "${_dir}/lib/*.so.*")
  list(REMOVE_ITEM _deps "${_dir}/lib/${soname}")
  set_target_properties(${target} PROPERTIES IMPORTED_LOCATION "${_dir}/lib/${soname}"
    INTERFACE_INCLUDE_DIRECTORIES "${_dir}/include" INTERFACE_LINK_LIBRARIES "${_deps}")
  message(STATUS "fastloop: ${module} from ${_dir}")
endfunction()
_fastloop_c_library(fastloop::turbojpeg libturbojpeg turbojpeg turbojpeg.h libturbojpeg.so.0)
_fastloop_c_library(fastloop::jpeg libjpeg jpeg jpeglib.h libjpeg.so.62)
_fastloop_c_library(fastloop::spng spng spng spng.h libspng.so.0)
_fastloop_c_library(fastloop::webp libwebp webp webp/decode.h libwebp.so.7)
_fastloop_c_library(fastloop::webpdemux libwebpdemux webpdemux webp/demux.h libwebpdemux.so.2)
_fastloop_c_library(fastloop::tiff libtiff-4 tiff tiffio.h libtiff.so.6)

# --- simdjson (COCO annotation files: data/targets/coco_annotations_read.cpp and fuzz/coco_json_fuzzer.cpp): Debian's
# libsimdjson-dev, else prepared/simdjson/{include,lib}. Only its header folder and library file are kept
# (FASTLOOP_SIMDJSON_INCLUDE_DIR, FASTLOOP_SIMDJSON_LIBRARY), not a target: a target's usage requirements
# (SIMDJSON_THREADS_ENABLED, as simdjson.pc says) would change every file's command line and the PCH, and only
# the one file that includes simdjson.h needs them (CMakeLists.txt sets them on it).
if(NOT FASTLOOP_USE_PREPARED)
  find_path(FASTLOOP_SIMDJSON_INCLUDE_DIR simdjson.h)
  find_library(FASTLOOP_SIMDJSON_LIBRARY NAMES simdjson)
endif()
if(FASTLOOP_USE_PREPARED OR NOT FASTLOOP_SIMDJSON_INCLUDE_DIR OR NOT FASTLOOP_SIMDJSON_LIBRARY)
  file(GLOB _fastloop_simdjson_so "${FASTLOOP_PREPARED_DIR}/simdjson/lib/libsimdjson.so.*")
  if(NOT EXISTS "${FASTLOOP_PREPARED_DIR}/simdjson/include/simdjson.h" OR NOT _fastloop_simdjson_so)
    _fastloop_prepared_missing("simdjson (simdjson.h, libsimdjson.so.N)")
  endif()
  list(GET _fastloop_simdjson_so 0 _fastloop_simdjson_so)
  set(FASTLOOP_SIMDJSON_INCLUDE_DIR "${FASTLOOP_PREPARED_DIR}/simdjson/include" CACHE PATH "simdjson.h's folder" FORCE)
  set(FASTLOOP_SIMDJSON_LIBRARY "${_fastloop_simdjson_so}" CACHE FILEPATH "libsimdjson" FORCE)
  message(STATUS "fastloop: simdjson from ${FASTLOOP_PREPARED_DIR}/simdjson")
endif()

# --- gloo headers (ProcessGroupGloo): with FASTLOOP_USE_PREPARED, the prepared copy answers the
# find_path(FASTLOOP_GLOO_INCLUDE_DIR ...) made where gloo is used.
if(FASTLOOP_USE_PREPARED AND EXISTS "${FASTLOOP_PREPARED_DIR}/gloo/include/gloo/config.h")
  set(FASTLOOP_GLOO_INCLUDE_DIR "${FASTLOOP_PREPARED_DIR}/gloo/include" CACHE PATH "gloo headers" FORCE)
endif()

# --- GoogleTest: the system's, else prepared/googletest (Debian's /usr/src/googletest) built here.
macro(fastloop_find_gtest)
  if(NOT FASTLOOP_USE_PREPARED)
    find_package(GTest)
  endif()
  if(NOT TARGET GTest::gtest_main)
    if(NOT EXISTS "${FASTLOOP_PREPARED_DIR}/googletest/CMakeLists.txt")
      _fastloop_prepared_missing("GoogleTest")
    endif()
    set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    add_subdirectory("${FASTLOOP_PREPARED_DIR}/googletest" "${PROJECT_BINARY_DIR}/prepared-googletest" EXCLUDE_FROM_ALL)
    message(STATUS "fastloop: GoogleTest built from ${FASTLOOP_PREPARED_DIR}/googletest")
  endif()
endmacro()
