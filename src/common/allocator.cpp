#include "common/allocator.h"

#include <cstddef>

// jemalloc's control interface. Declared weak, so that this file needs neither jemalloc's
// header nor its library: the symbol is non-null exactly when jemalloc is linked in.
extern "C" int mallctl(const char* name, void* oldp, std::size_t* oldlenp, void* newp,
                       std::size_t newlen) __attribute__((weak));

namespace tandem {

std::string allocator_name() {
  if (mallctl == nullptr) {
    return "system";
  }
  const char* version = nullptr;
  std::size_t size = sizeof(version);
  if (mallctl("version", static_cast<void*>(&version), &size, nullptr, 0) != 0 ||
      version == nullptr) {
    return "jemalloc";
  }
  return std::string("jemalloc ") + version;
}

}  // namespace tandem
