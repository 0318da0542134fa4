#include "upstream/connection_pool.h"

#include <algorithm>
#include <mutex>
#include <vector>

namespace tandem::upstream {
namespace {

// The idle sockets of every pool on one io_context. Destroyed with the io_context (its
// shutdown() first, while the reactor the sockets belong to still exists).
class IdleSockets final : public net::asio::execution_context::service {
 public:
  // NOLINTNEXTLINE(readability-identifier-naming): the name Asio's use_service requires.
  inline static net::asio::execution_context::id id;

  explicit IdleSockets(net::asio::execution_context& context)
      : net::asio::execution_context::service(context) {}

  std::optional<net::tcp::socket> take(const std::shared_ptr<const char>& pool) {
    std::lock_guard lock(mutex_);
    drop_gone_pools();
    Shelf* shelf = find(pool.get());
    if (shelf == nullptr || shelf->sockets.empty()) {
      return std::nullopt;
    }
    net::tcp::socket socket = std::move(shelf->sockets.back());
    shelf->sockets.pop_back();
    return socket;
  }

  // Returns the socket when the shelf is full: the caller closes it outside the lock.
  std::optional<net::tcp::socket> give(const std::shared_ptr<const char>& pool,
                                       net::tcp::socket socket, size_t max_idle) {
    std::lock_guard lock(mutex_);
    if (shut_down_) {  // a request's frame destroyed by the io_context's own shutdown
      return socket;
    }
    drop_gone_pools();
    Shelf* shelf = find(pool.get());
    if (shelf == nullptr) {
      shelf = &shelves_.emplace_back(Shelf{pool.get(), pool, {}});
    }
    if (shelf->sockets.size() >= max_idle) {
      return socket;
    }
    shelf->sockets.push_back(std::move(socket));
    return std::nullopt;
  }

  size_t idle(const std::shared_ptr<const char>& pool) {
    std::lock_guard lock(mutex_);
    drop_gone_pools();
    const Shelf* shelf = find(pool.get());
    return shelf == nullptr ? 0 : shelf->sockets.size();
  }

 private:
  struct Shelf {
    const char* key;                  // the pool's identity, valid while `owner` has not expired
    std::weak_ptr<const char> owner;  // expired: the pool is gone, its sockets are closed
    std::vector<net::tcp::socket> sockets;
  };

  void shutdown() override {
    std::lock_guard lock(mutex_);
    shut_down_ = true;
    shelves_.clear();
  }

  // A few pools per process (one per upstream): linear search beats hashing here. Called with
  // gone pools already dropped, so a key reused by a new pool cannot match an old shelf.
  Shelf* find(const char* pool_key) {
    for (Shelf& shelf : shelves_) {
      if (shelf.key == pool_key) {
        return &shelf;
      }
    }
    return nullptr;
  }

  void drop_gone_pools() {
    shelves_.erase(std::remove_if(shelves_.begin(), shelves_.end(),
                                  [](const Shelf& shelf) { return shelf.owner.expired(); }),
                   shelves_.end());
  }

  std::mutex mutex_;
  std::vector<Shelf> shelves_;  // guarded by mutex_
  bool shut_down_ = false;      // guarded by mutex_
};

IdleSockets& idle_sockets_of(net::asio::execution_context& context) {
  return net::asio::use_service<IdleSockets>(context);
}

}  // namespace

std::optional<net::tcp::socket> ConnectionPool::take(net::asio::execution_context& context) {
  return idle_sockets_of(context).take(identity_);
}

void ConnectionPool::give(net::tcp::socket socket) {
  auto& context = net::asio::query(socket.get_executor(), net::asio::execution::context);
  auto refused = idle_sockets_of(context).give(identity_, std::move(socket), max_idle_);
  if (refused) {
    boost::system::error_code ignored;
    refused->close(ignored);
  }
}

size_t ConnectionPool::idle(net::asio::execution_context& context) const {
  return idle_sockets_of(context).idle(identity_);
}

}  // namespace tandem::upstream
