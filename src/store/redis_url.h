#pragma once
// What the Redis client needs of redis_url.cpp beyond redis_client.h's parse_redis_url and
// check_redis_options. Internal to tandem_store.
//
// Thread-safety: free functions without shared state.

#include <string>

#include "store/redis_client.h"

namespace tandem::store {

// The endpoint as a URL without credentials ("redis://127.0.0.1:6379/0"), for logs.
std::string describe(const RedisEndpoint& endpoint);

}  // namespace tandem::store
