#pragma once
// Tandem's version, as `tandem --version` and the status API report it.

namespace tandem {

inline constexpr const char* kTandemVersion = "0.6.0";

}  // namespace tandem
