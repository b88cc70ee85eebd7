# Install rules and a CMake package so another project can find_package(fastloop).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

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
