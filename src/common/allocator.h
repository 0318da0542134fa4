#pragma once
// Which heap allocator the running process uses: build/tandem links jemalloc unless it was
// configured with -DTANDEM_ALLOCATOR=system (or is a sanitizer build). The status API and the
// serve banner report it, so a deployment can tell which one its figures came from.
//
// Thread-safety: allocator_name() may be called from any thread.

#include <string>

namespace tandem {

// "jemalloc 5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c" when jemalloc is linked in
// (its version as it reports it), else "system".
std::string allocator_name();

}  // namespace tandem
