// libFuzzer's entry point for one target: fuzz/CMakeLists.txt compiles this file once per
// target with TANDEM_FUZZ_BODY naming the body (fuzz_targets.h).

#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  TANDEM_FUZZ_BODY(data, size);
  return 0;
}
