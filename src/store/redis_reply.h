#pragma once
// hiredis's replies as the Redis client sees them. Internal to tandem_store: only
// redis_client.cpp and redis_reply.cpp include hiredis.h.
//
// Thread-safety: free functions without shared state.

#include <string>
#include <string_view>

#include "common/result.h"
#include "store/redis_client.h"

namespace tandem::store {

// A command's name for messages: argv[0] upper-cased, or "command" when it does not look like
// one (it is the only argument ever quoted, and it must not carry data).
std::string command_name(std::string_view name);

// hiredis's reply as a RedisReply; an error reply anywhere in it becomes an Error naming
// `what` (the command), kBusy for the errors worth a retry.
Result<RedisReply> convert(const redisReply* raw, std::string_view what);

// Whether `raw` is an error reply whose text starts with `code` ("NOSCRIPT").
bool is_error_reply(const redisReply* raw, std::string_view code);

}  // namespace tandem::store
