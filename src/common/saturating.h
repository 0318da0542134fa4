#pragma once
// Arithmetic on sizes read from untrusted files (a GGUF header's counts and dimensions): a
// result too large for 64 bits becomes UINT64_MAX instead of wrapping to a small number, so a
// crafted header reads as "needs more memory than exists", never as "fits".

#include <cstdint>
#include <initializer_list>

namespace tandem {

inline uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

inline uint64_t saturating_mul(std::initializer_list<uint64_t> factors) {
  uint64_t product = 1;
  for (const uint64_t factor : factors) {
    if (__builtin_mul_overflow(product, factor, &product)) {
      return UINT64_MAX;
    }
  }
  return product;
}

}  // namespace tandem
