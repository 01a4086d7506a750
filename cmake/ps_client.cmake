# The parameter-server client library (libpq), its example and its test-and-benchmark tool.
#   hopper_ps_client   static library: client/include/hopper/kvtable.h (KVTable<float>)
#   hopper_ps_tool     test and benchmark driver (test/scripts/ps_*.sh, bench/ps_throughput.sh)
#   ps_logreg          example: logistic regression on Fashion-MNIST with N worker processes
# Skipped (with a message) where libpq is not installed; the core and its tests do not need it.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(HOPPER_LIBPQ IMPORTED_TARGET libpq)
endif()
if(NOT HOPPER_LIBPQ_FOUND)
  message(STATUS "libpq not found: the parameter-server client, its tool and example are not built")
  return()
endif()

add_library(hopper_ps_client STATIC ${CMAKE_SOURCE_DIR}/client/src/kvtable.cpp)
target_include_directories(hopper_ps_client PUBLIC ${CMAKE_SOURCE_DIR}/client/include)
target_link_libraries(hopper_ps_client PUBLIC PkgConfig::HOPPER_LIBPQ)

add_executable(hopper_ps_tool ${CMAKE_SOURCE_DIR}/client/tools/ps_tool.cpp)
target_link_libraries(hopper_ps_tool PRIVATE hopper_ps_client)

add_executable(ps_logreg ${CMAKE_SOURCE_DIR}/examples/ps_logreg.cpp)
target_link_libraries(ps_logreg PRIVATE hopper_ps_client ZLIB::ZLIB)
