# libFuzzer targets for every parser and deserialiser of the core (configure with clang:
#   CC=clang-14 CXX=clang++-14 cmake -S . -B build/fuzz -DHOPPER_FUZZ=ON
#   cmake --build build/fuzz --target hopper_fuzzers -j2
# ). With HOPPER_FUZZ the core is built with ASan and UBSan (CMakeLists.txt); here it also gets
# libFuzzer's coverage instrumentation, and each target links libFuzzer's main. test/suites/fuzz.sh
# runs them; docs/reliability.md describes longer runs.
if(HOPPER_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "HOPPER_FUZZ needs clang (CC=clang-14 CXX=clang++-14)")
  endif()
  target_compile_options(hopper_core PRIVATE -fsanitize=fuzzer-no-link)

  set(HOPPER_FUZZ_TARGETS architecture compile_params fit_params model_config state buffer recipe onnx)
  add_custom_target(hopper_fuzzers)
  foreach(name ${HOPPER_FUZZ_TARGETS})
    add_executable(fuzz_${name} ${CMAKE_SOURCE_DIR}/test/fuzz/fuzz_${name}.cpp)
    target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(fuzz_${name} PRIVATE hopper_core nlohmann_json::nlohmann_json ZLIB::ZLIB)
    add_dependencies(hopper_fuzzers fuzz_${name})
  endforeach()

  # Writes the generated seed corpora (model states, model configurations, packed buffers).
  add_executable(hopper_fuzz_seeds ${CMAKE_SOURCE_DIR}/test/fuzz/make_seeds.cpp)
  target_link_libraries(hopper_fuzz_seeds PRIVATE hopper_core nlohmann_json::nlohmann_json ZLIB::ZLIB)
  add_dependencies(hopper_fuzzers hopper_fuzz_seeds)
endif()
