# The fuzz targets' bodies (fuzz_targets.h) as one library, built by both drivers:
# fuzz/CMakeLists.txt (libFuzzer, clang, TANDEM_FUZZ=ON) and tests/CMakeLists.txt
# (fuzz_regression_tests, the normal GCC build). Names here match kFuzzTargets.
include_guard(GLOBAL)
set(TANDEM_FUZZ_TARGETS
  http_request openai_body upstream_sse yaml_config routing_traces privacy_scan egress_guard gguf_header
  prompt_features)

add_library(tandem_fuzz_bodies STATIC
  ${CMAKE_CURRENT_LIST_DIR}/targets/boost_assert_handler.cpp
  ${CMAKE_CURRENT_LIST_DIR}/targets/completion_checks.cpp
  ${CMAKE_CURRENT_LIST_DIR}/targets/egress_guard.cpp
  ${CMAKE_CURRENT_LIST_DIR}/targets/gguf_header.cpp
  ${CMAKE_CURRENT_LIST_DIR}/targets/http_request.cpp
  ${CMAKE_CURRENT_LIST_DIR}/targets/openai_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/targets/privacy_scan.cpp
  ${CMAKE_CURRENT_LIST_DIR}/targets/prompt_features.cpp
  ${CMAKE_CURRENT_LIST_DIR}/targets/routing_traces.cpp
  ${CMAKE_CURRENT_LIST_DIR}/targets/upstream_sse.cpp
  ${CMAKE_CURRENT_LIST_DIR}/targets/yaml_config.cpp
)
# Beast's parser runs inside http_request.cpp: its assertions stay on in every build type and go
# through boost_assert_handler.cpp, which knows Boost 1.74's one wrong assertion.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/targets/http_request.cpp PROPERTIES
  COMPILE_DEFINITIONS BOOST_ENABLE_ASSERT_HANDLER)
# "fuzz/..." includes resolve from the project root.
target_include_directories(tandem_fuzz_bodies PUBLIC ${PROJECT_SOURCE_DIR})
# Only the libraries that hold the parsers, not tandem_server (the gateway, which clang 14 cannot
# compile and the targets do not need); ggml only for its type sizes: gguf_header recomputes
# tensor sizes independently of the parser.
target_link_libraries(tandem_fuzz_bodies
  PUBLIC tandem_server_api tandem_eval tandem_routing tandem_upstream tandem_net tandem_config
         tandem_engine
  PRIVATE tandem_warnings ggml::ggml-base)
