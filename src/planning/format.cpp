#include "planning/format.h"

#include <cmath>
#include <cstdio>

namespace tandem::planning {

std::string format_fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

std::string format_bytes(double bytes) {
  constexpr double kKib = 1024.0;
  if (bytes >= kKib * kKib * kKib) {
    return format_fixed(bytes / (kKib * kKib * kKib), 2) + " GiB";
  }
  if (bytes >= kKib * kKib) {
    return format_fixed(bytes / (kKib * kKib), 2) + " MiB";
  }
  if (bytes >= kKib) {
    return format_fixed(bytes / kKib, 2) + " KiB";
  }
  return format_fixed(bytes, 0) + " bytes";
}

std::string format_ms(double ms) {
  return format_fixed(ms, ms < 10 ? 1 : 0) + " ms";
}

std::string format_usd(double usd) {
  const double magnitude = std::fabs(usd);
  return "$" + format_fixed(usd, magnitude >= 100 ? 0 : (magnitude >= 1 || usd == 0 ? 2 : 4));
}

std::string format_percent(double share) {
  return format_fixed(share * 100, share < 0.1 ? 1 : 0) + "%";
}

}  // namespace tandem::planning
