# `cmake --install <build> --prefix P --component flashfuse-dev`: the
# libraries, headers (source and tablegen-generated), .td files and the
# CMake package that lets another project write
#
#   find_package(FlashFuse CONFIG REQUIRED)
#   target_link_libraries(my-tool PRIVATE FlashFuse::FlashPipelines)
#
# (docs/EMBEDDING.md). A component of its own: the wheel installs component
# "wheel" only and must not pick any of this up. Laid out as upstream MLIR
# installs itself: lib/, include/ and lib/cmake/flashfuse/.

include(CMakePackageConfigHelpers)

set(FLASHFUSE_INSTALL_COMPONENT flashfuse-dev)
set(FLASHFUSE_INSTALL_CMAKEDIR lib/cmake/flashfuse)

# Every library a consumer can name, and everything they link PUBLIC (an
# exported target may only depend on exported ones).
set(FLASHFUSE_EXPORTED_LIBS
  FlashDialect TMTensorDialect FlashTransforms FlashConversionCommon FlashToNaive
  FlashToLoops FlashToGPU FlashKVCacheToAttention FlashFp8ToInteger FlashPipelines
  FlashCAPI FlashFuseCAPI flashfuse_runtime)

foreach(lib ${FLASHFUSE_EXPORTED_LIBS})
  # The build compiles against the source and build include directories
  # through include_directories(); an installed consumer gets the prefix's.
  target_include_directories(${lib} INTERFACE $<INSTALL_INTERFACE:include>)
endforeach()

install(TARGETS ${FLASHFUSE_EXPORTED_LIBS}
  EXPORT FlashFuseTargets
  COMPONENT ${FLASHFUSE_INSTALL_COMPONENT}
  ARCHIVE DESTINATION lib
  LIBRARY DESTINATION lib
  RUNTIME DESTINATION bin)

# Source headers and .td files (a consumer's own ODS may include
# FlashOps.td), then the generated .h.inc/.cpp.inc beside them.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/flashfuse
                  ${PROJECT_SOURCE_DIR}/include/flashfuse-c
  DESTINATION include
  COMPONENT ${FLASHFUSE_INSTALL_COMPONENT}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/flashfuse
  DESTINATION include
  COMPONENT ${FLASHFUSE_INSTALL_COMPONENT}
  FILES_MATCHING PATTERN "*.inc"
  PATTERN "CMakeFiles" EXCLUDE)
# The runtime's C API and C++ wrapper (it needs no MLIR at run time).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/flashfuse
  DESTINATION include
  COMPONENT ${FLASHFUSE_INSTALL_COMPONENT}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")

install(EXPORT FlashFuseTargets
  NAMESPACE FlashFuse::
  DESTINATION ${FLASHFUSE_INSTALL_CMAKEDIR}
  COMPONENT ${FLASHFUSE_INSTALL_COMPONENT})

# What the package config checks a consumer's MLIR against: the C++ API and
# the C API's ABI change with every LLVM major release.
set(FLASHFUSE_MLIR_VERSION ${MLIR_VERSION})
if(NOT FLASHFUSE_MLIR_VERSION)
  set(FLASHFUSE_MLIR_VERSION ${LLVM_PACKAGE_VERSION})
endif()
set(FLASHFUSE_MLIR_VERSION_MAJOR ${LLVM_VERSION_MAJOR})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/FlashFuseConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/FlashFuseConfig.cmake
  INSTALL_DESTINATION ${FLASHFUSE_INSTALL_CMAKEDIR})
# 0.x: a minor release may break the API, so only the same minor matches.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/FlashFuseConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/FlashFuseConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/FlashFuseConfigVersion.cmake
  DESTINATION ${FLASHFUSE_INSTALL_CMAKEDIR}
  COMPONENT ${FLASHFUSE_INSTALL_COMPONENT})
