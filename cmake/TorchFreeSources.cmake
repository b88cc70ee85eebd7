# Sources that include no LibTorch header compile on their own (outside the unity batches of CMakeLists.txt)
# and without the <torch/torch.h> precompiled header: loading
# that PCH (~700 MB) costs more CPU than such a file takes to compile (measured on 2 cores: tar.cpp 9.3 s
# with it, 1.4 s without; plot.cpp 10.2 s / 2.5 s; test_tar.cpp 25.7 s / 12.9 s), and about a third of
# the sources are like that. A file counts as torch-free when neither it nor a fastloop header it includes
# (transitively; "..."-includes beside it too) includes a torch/, ATen/, c10/ or caffe2/ header. The rule
# only chooses how a file is compiled, never whether it compiles: a file that starts to include LibTorch
# simply loads the PCH again.

# _fastloop_torch_free(FILE RESULT): TRUE when FILE reaches no LibTorch header. Memoised per file.
function(_fastloop_torch_free file result)
  get_property(known GLOBAL PROPERTY "_fastloop_torch_free_${file}" SET)
  if(known)
    get_property(free GLOBAL PROPERTY "_fastloop_torch_free_${file}")
    set(${result} ${free} PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY "_fastloop_torch_free_${file}" TRUE)  # an include cycle ends here
  file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include")
  get_filename_component(dir "${file}" DIRECTORY)
  set(free TRUE)
  foreach(line IN LISTS includes)
    set(next "")
    if(line MATCHES "[<\"](torch|ATen|c10|caffe2)/")
      set(free FALSE)
    elseif(line MATCHES "[<\"](fastloop/[^>\"]+)[>\"]")
      set(next "${PROJECT_SOURCE_DIR}/src/${CMAKE_MATCH_1}")
      if(NOT EXISTS "${next}")  # the benchmark's headers: bench/src/fastloop/bench
        set(next "${PROJECT_SOURCE_DIR}/bench/src/${CMAKE_MATCH_1}")
      endif()
    elseif(line MATCHES "\"([^\"]+)\"")
      set(next "${dir}/${CMAKE_MATCH_1}")
    endif()
    if(free AND next AND EXISTS "${next}")
      _fastloop_torch_free("${next}" sub)
      if(NOT sub)
        set(free FALSE)
      endif()
    endif()
    if(NOT free)
      break()
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY "_fastloop_torch_free_${file}" ${free})
  set(${result} ${free} PARENT_SCOPE)
endfunction()

# fastloop_skip_pch_without_torch(SOURCES...): SKIP_PRECOMPILE_HEADERS on the torch-free ones (call it in
# the directory whose targets compile them: source properties are per directory).
function(fastloop_skip_pch_without_torch)
  set(skipped 0)
  foreach(source IN LISTS ARGN)
    _fastloop_torch_free("${source}" free)
    if(free)
      # and out of the unity batches (CMakeLists.txt), which load the PCH
      set_source_files_properties("${source}" PROPERTIES SKIP_PRECOMPILE_HEADERS ON SKIP_UNITY_BUILD_INCLUSION ON)
      math(EXPR skipped "${skipped} + 1")
    endif()
  endforeach()
  list(LENGTH ARGN total)
  message(STATUS "fastloop: ${skipped} of ${total} sources in ${CMAKE_CURRENT_SOURCE_DIR} include no LibTorch header (no PCH)")
endfunction()
