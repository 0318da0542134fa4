#pragma once
// The tiny models with real tokenizers and chat templates that scripts/make-test-models.py
// derives (random weights; models.json in their directory describes each):
//
//   llama3-tiny.gguf   llama, Llama 3.1's vocabulary, Llama 3.2 Instruct's template
//   qwen3-tiny.gguf    qwen3, Qwen3's vocabulary (<tool_call>, <think> single tokens), its template
//   hermes3-tiny.gguf  llama, Llama 3.1's vocabulary plus <|im_start|>/<|im_end|>, Hermes 3's
//                      tool-use template (<tool_call> is text)
//
// Their directory is a cache outside the checkout, given to the build as
// TANDEM_TEST_MODELS_DIR (tests/CMakeLists.txt). Header-only, for the test targets that
// define it.

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#ifndef TANDEM_TEST_MODELS_DIR
#error "TANDEM_TEST_MODELS_DIR is not defined for this test target: see tests/CMakeLists.txt"
#endif

namespace tandem::test {

// The path of derived test model `file` ("qwen3-tiny.gguf"). When the build was configured
// without the models, or the file is missing, it fails the calling test with what to run,
// and returns "": a test that needs the models never passes or skips without them.
//
//   const std::string model = derived_model("qwen3-tiny.gguf");
//   ASSERT_FALSE(model.empty());
inline std::string derived_model(const std::string& file) {
  const std::string dir = TANDEM_TEST_MODELS_DIR;
  if (dir.empty()) {
    ADD_FAILURE() << "this build has no derived test models: configure it with "
                     "-DTANDEM_TEST_MODELS_DIR=\"$(scripts/test-models.sh | tail -n 1)\", "
                     "as scripts/build.sh does";
    return {};
  }
  const auto path = std::filesystem::path(dir) / file;
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    ADD_FAILURE() << path.string() << " is missing: run scripts/test-models.sh (it writes the "
                  << "models again) and configure the build with the directory it prints";
    return {};
  }
  return path.string();
}

}  // namespace tandem::test
