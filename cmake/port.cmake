# The port (src/pg/*/*.cpp) compiled by CMake, for clang-tidy and editors: with
#   cmake -S . -B build/port -DHOPPER_PORT=ON -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
#   cmake --build build/port --target hopper_port_objects -j2
# compile_commands.json covers the port with PostgreSQL's include directories and the Makefile's
# flags. Only objects: the Makefile (PGXS) builds, links and installs the extension.
option(HOPPER_PORT "compile the port (src/pg) too, for compile_commands.json; needs pg_config" OFF)
if(NOT HOPPER_PORT)
  return()
endif()
set(PG_CONFIG "$ENV{PG_CONFIG}" CACHE FILEPATH "pg_config of the PostgreSQL the port compiles against")
if(NOT PG_CONFIG)
  find_program(PG_CONFIG_FOUND NAMES pg_config PATHS /usr/lib/postgresql/15/bin NO_DEFAULT_PATH)
  find_program(PG_CONFIG_FOUND NAMES pg_config)
  set(PG_CONFIG ${PG_CONFIG_FOUND} CACHE FILEPATH "" FORCE)
endif()
if(NOT PG_CONFIG)
  message(FATAL_ERROR "HOPPER_PORT needs pg_config (set PG_CONFIG)")
endif()
execute_process(COMMAND ${PG_CONFIG} --includedir-server OUTPUT_VARIABLE PG_INCLUDEDIR_SERVER
                OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${PG_CONFIG} --pkgincludedir OUTPUT_VARIABLE PG_PKGINCLUDEDIR
                OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
file(STRINGS ${CMAKE_SOURCE_DIR}/hopper.control HOPPER_CONTROL_VERSION REGEX "^default_version")
string(REGEX REPLACE ".*'(.*)'.*" "\\1" HOPPER_EXTVERSION "${HOPPER_CONTROL_VERSION}")

file(GLOB HOPPER_PORT_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/pg/*/*.cpp)
add_library(hopper_port_objects OBJECT ${HOPPER_PORT_SOURCES})
target_include_directories(hopper_port_objects PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/src)
target_include_directories(hopper_port_objects SYSTEM PRIVATE ${EIGEN3_INCLUDE_DIR} ${PG_INCLUDEDIR_SERVER}
                           ${PG_PKGINCLUDEDIR}/internal)
target_compile_definitions(hopper_port_objects PRIVATE EIGEN_DONT_PARALLELIZE HOPPER_VERSION="${HOPPER_EXTVERSION}"
                           _GNU_SOURCE)
if(HOPPER_GEMM STREQUAL "onednn")
  target_compile_definitions(hopper_port_objects PRIVATE HOPPER_WITH_ONEDNN)
endif()
# The Makefile's flags (PGXS's warnings and PostgreSQL's -fno-strict-aliasing -fwrapv, then
# PG_CXXFLAGS), replacing the core's -Wextra: the port is held to what the Makefile builds it with.
set_target_properties(hopper_port_objects PROPERTIES COMPILE_OPTIONS
  "-Wall;-Wpointer-arith;-Wendif-labels;-Wmissing-format-attribute;-Wimplicit-fallthrough=3;-Wcast-function-type;-Wformat-security;-fno-strict-aliasing;-fwrapv;-Wno-register;-Wno-unused-parameter;-Wno-maybe-uninitialized;-fexceptions")
