# Install rules and a CMake package so another project can find_package(fastloop).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Installed binaries find LibTorch where they were built against it (a venv inside the source tree is
# not added by CMAKE_INSTALL_RPATH_USE_LINK_PATH) and the app finds libfastloop beside it.
get_filename_component(_fastloop_torch_lib "${TORCH_INSTALL_PREFIX}/lib" REALPATH)
set_target_properties(fastloop PROPERTIES INSTALL_RPATH "${_fastloop_torch_lib}")
# $ORIGIN/..: the Python package's copy, fastloop/bin/fastloop beside fastloop/libfastloop.so (python/).
set_target_properties(fastloop_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR};$ORIGIN/..;${_fastloop_torch_lib}")

install(TARGETS fastloop EXPORT fastloopTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS fastloop_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Only the public API: include/fastloop/fastloop.h and the fastloop headers it reaches, found by following
# their #include lines (internal headers stay out of the installed tree).
function(_fastloop_public_headers header result)
  set(found "")
  set(pending "${header}")
  while(pending)
    list(POP_FRONT pending file)
    file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"fastloop/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE ".*\"(fastloop/[^\"]+)\".*" "\\1" relative "${line}")
      set(path "${PROJECT_SOURCE_DIR}/src/${relative}")
      if(EXISTS "${path}" AND NOT path IN_LIST found)
        list(APPEND found "${path}")
        list(APPEND pending "${path}")
      endif()
    endforeach()
  endwhile()
  set(${result} ${found} PARENT_SCOPE)
endfunction()
_fastloop_public_headers(${PROJECT_SOURCE_DIR}/include/fastloop/fastloop.h _fastloop_headers)
# A header that starts to include another changes the list: configure again then.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS include/fastloop/fastloop.h ${_fastloop_headers})
foreach(header IN LISTS _fastloop_headers)
  file(RELATIVE_PATH relative "${PROJECT_SOURCE_DIR}/src" "${header}")
  get_filename_component(folder "${relative}" DIRECTORY)
  install(FILES "${header}" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${folder})
endforeach()
install(FILES include/fastloop/fastloop.h ${CMAKE_CURRENT_BINARY_DIR}/generated/fastloop/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fastloop)
install(EXPORT fastloopTargets NAMESPACE fastloop:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fastloop)

configure_package_config_file(cmake/fastloopConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/fastloopConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fastloop)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/fastloopConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/fastloopConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/fastloopConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fastloop)
