// allocator_name() tells jemalloc from the system allocator by whether jemalloc's control
// interface is linked in. This test binary links no allocator, so it must say "system"; the
// end-to-end test checks that build/tandem reports the one its build chose.

#include "common/allocator.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(AllocatorTest, ABinaryWithoutJemallocReportsTheSystemAllocator) {
  EXPECT_EQ(allocator_name(), "system");
}

}  // namespace
}  // namespace tandem
