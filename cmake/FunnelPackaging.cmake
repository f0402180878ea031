# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# Install rules and the package config that makes find_package(Funnel) work downstream.
include(CMakePackageConfigHelpers)

install(TARGETS funnel_framework funnel_kernels EXPORT FunnelTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/framework/include/ ${PROJECT_SOURCE_DIR}/kernels/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh")
install(FILES ${PROJECT_BINARY_DIR}/framework/include/funnel/config.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/funnel)

set(FUNNEL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Funnel)
install(EXPORT FunnelTargets NAMESPACE funnel:: DESTINATION ${FUNNEL_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/FunnelConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/FunnelConfig.cmake
                              INSTALL_DESTINATION ${FUNNEL_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/FunnelConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/FunnelConfig.cmake ${PROJECT_BINARY_DIR}/FunnelConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FunnelKokkosRepair.cmake
        DESTINATION ${FUNNEL_CMAKE_DIR})
