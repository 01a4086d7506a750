# Small command-line tools: the idx (MNIST/Fashion-MNIST) loader used by the demo and benchmarks.
add_executable(hopper_load_idx ${CMAKE_SOURCE_DIR}/tools/load_idx.cpp)
target_link_libraries(hopper_load_idx PRIVATE ZLIB::ZLIB)
