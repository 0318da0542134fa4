#include "upstream/egress.h"

namespace tandem::upstream {

net::awaitable<std::variant<GuardedBody, EgressRefusal>> EgressGuard::admit(
    std::string bytes, const EgressSend& send) {
  std::optional<EgressRefusal> refused = co_await inspect(bytes, send);
  if (refused) {
    co_return std::move(*refused);
  }
  co_return GuardedBody(std::move(bytes));
}

}  // namespace tandem::upstream
