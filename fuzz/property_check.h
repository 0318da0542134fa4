#pragma once
// Property checks for the fuzz targets. A broken property names itself and aborts, so that
// libFuzzer saves the input as a crash and the GoogleTest replay of that input dies with the
// same message. Checks stay on in every build type: they are the point of the targets.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace tandem::fuzz {

[[noreturn]] inline void property_broken(const char* expression, const char* file, int line,
                                         const std::string& detail) {
  std::fprintf(stderr, "%s:%d: fuzz property broken: %s%s%s\n", file, line, expression,
               detail.empty() ? "" : " -- ", detail.c_str());
  std::fflush(stderr);
  std::abort();
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return size == 0 ? std::string_view()
                   : std::string_view(reinterpret_cast<const char*>(data), size);
}

}  // namespace tandem::fuzz

// FUZZ_CHECK(condition) and FUZZ_CHECK_MSG(condition, detail): `detail` (a std::string
// expression) is only built when the check fails.
#define FUZZ_CHECK(condition)                                                         \
  do {                                                                                \
    if (!(condition)) {                                                               \
      ::tandem::fuzz::property_broken(#condition, __FILE__, __LINE__, std::string()); \
    }                                                                                 \
  } while (false)

#define FUZZ_CHECK_MSG(condition, detail)                                        \
  do {                                                                           \
    if (!(condition)) {                                                          \
      ::tandem::fuzz::property_broken(#condition, __FILE__, __LINE__, (detail)); \
    }                                                                            \
  } while (false)
