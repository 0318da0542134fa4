#pragma once
// The bodies of Tandem's fuzz targets, one per parser of untrusted input. Each takes arbitrary
// bytes, runs the parser the way the product does and checks what the parser's contract
// promises (property_check.h); a broken property or a sanitizer report is a finding.
//
// One body, two drivers: libfuzzer_main.cpp makes each body a libFuzzer binary (clang,
// TANDEM_FUZZ=ON, scripts/fuzz.sh), and tests/fuzz/fuzz_regression_test.cpp replays every seed
// (fuzz/corpus/<name>/) and every minimised crasher (fuzz/regressions/<name>/) through the same
// bodies in the normal GCC build. fuzz/README.md says how to run and extend them.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tandem::fuzz {

// An HTTP/1.1 connection's bytes through Beast's parser configured as the server's, then the
// path and query split, the X-Tandem-* routing headers and the JSON body.
void fuzz_http_request(const uint8_t* data, size_t size);
// A /v1/chat/completions or /v1/completions body through parse_completion_request().
void fuzz_openai_body(const uint8_t* data, size_t size);
// An upstream's event stream through SseParser in several chunkings, each event's JSON through
// parse_cloud_chunk(), and the whole body as a non-streaming answer.
void fuzz_upstream_sse(const uint8_t* data, size_t size);
// A YAML configuration through parse_config() and the calibration writer's apply_edits().
void fuzz_yaml_config(const uint8_t* data, size_t size);
// A JSONL routing trace file through parse_traces(), then the evaluator's make_samples().
void fuzz_routing_traces(const uint8_t* data, size_t size);
// Prompt text through the privacy scanner: built-in detectors and configured rules.
void fuzz_privacy_scan(const uint8_t* data, size_t size);
// Prompt text through the router's prompt features: the cue scan and the task model's n-grams.
void fuzz_prompt_features(const uint8_t* data, size_t size);
// A JSON body with a secret planted anywhere through the egress guard's verdict, judge_egress().
void fuzz_egress_guard(const uint8_t* data, size_t size);
// A model file's bytes through parse_gguf_header().
void fuzz_gguf_header(const uint8_t* data, size_t size);

struct FuzzTarget {
  std::string_view name;  // the directory under fuzz/corpus/ and fuzz/regressions/
  void (*run)(const uint8_t* data, size_t size);
};

inline constexpr FuzzTarget kFuzzTargets[] = {
    {"http_request", fuzz_http_request},       {"openai_body", fuzz_openai_body},
    {"upstream_sse", fuzz_upstream_sse},       {"yaml_config", fuzz_yaml_config},
    {"routing_traces", fuzz_routing_traces},   {"privacy_scan", fuzz_privacy_scan},
    {"egress_guard", fuzz_egress_guard},       {"gguf_header", fuzz_gguf_header},
    {"prompt_features", fuzz_prompt_features},
};

}  // namespace tandem::fuzz
