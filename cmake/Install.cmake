# Install rules and a CMake package so another project can find_package(fastloop).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Installed binaries find LibTorch where they were built against it (a venv inside the source tree is
# not added by CMAKE_INSTALL_RPATH_USE_LINK_PATH) and the app finds libfastloop beside it.
get_filename_component(_fastloop_torch_lib "${TORCH_INSTALL_PREFIX}/lib" REALPATH)
set_target_properties(fastloop PROPERTIES INSTALL_RPATH "${_fastloop_torch_lib}")
set_target_properties(fastloop_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${_fastloop_torch_lib}")

install(TARGETS fastloop EXPORT fastloopTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS fastloop_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY src/fastloop DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/generated/fastloop/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fastloop)
install(EXPORT fastloopTargets NAMESPACE fastloop:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fastloop)

configure_package_config_file(cmake/fastloopConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/fastloopConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fastloop)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/fastloopConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/fastloopConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/fastloopConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fastloop)
