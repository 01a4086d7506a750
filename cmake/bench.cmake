# Benchmark programs (bench/run.sh builds and runs them):
#   hopper_core_alone   the training core on in-memory Fashion-MNIST, without PostgreSQL
#   hopper_conv_bench   the Conv2D algorithm against its alternatives and its GEMM floor, on the
#                       Keras simple convnet (bench/conv.cpp; reads the core's internal layers.h)
#   hopper_gemm_bench   float32 GEMM limit on the MLP's layer shapes (Google Benchmark; skipped
#                       with a message where libbenchmark-dev is not installed)
# Both use the core's flags (HOPPER_OPT, the extension's -O3 -march=native) and Eigen settings.
find_package(Threads REQUIRED)
add_executable(hopper_core_alone ${CMAKE_SOURCE_DIR}/bench/core_alone.cpp)
target_link_libraries(hopper_core_alone PRIVATE hopper_core ZLIB::ZLIB Threads::Threads)

add_executable(hopper_conv_bench ${CMAKE_SOURCE_DIR}/bench/conv.cpp)
target_include_directories(hopper_conv_bench PRIVATE ${CMAKE_SOURCE_DIR}/src/core)
target_link_libraries(hopper_conv_bench PRIVATE hopper_core)
target_compile_options(hopper_conv_bench PRIVATE -Wno-maybe-uninitialized)

find_package(benchmark QUIET)
if(NOT benchmark_FOUND)
  message(STATUS "Google Benchmark (libbenchmark-dev) not found: hopper_gemm_bench is not built")
  return()
endif()
add_executable(hopper_gemm_bench ${CMAKE_SOURCE_DIR}/bench/gemm.cpp)
target_include_directories(hopper_gemm_bench SYSTEM PRIVATE ${EIGEN3_INCLUDE_DIR})
target_compile_definitions(hopper_gemm_bench PRIVATE EIGEN_DONT_PARALLELIZE)
target_link_libraries(hopper_gemm_bench PRIVATE benchmark::benchmark ${CMAKE_DL_LIBS})
