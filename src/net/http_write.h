#pragma once
// Writing a whole HTTP/1.1 message with a string body, without Beast's serializer. The head is
// formatted into one string and the message goes out in one sendmsg that does not wait; only
// what the socket does not take at once is left to an asynchronous write on the stream, whose
// timeout then applies.
// Why: Beast's serializer, its buffer views and the round trip through the scheduler cost
// about 16k instructions per message, two messages per relayed request; a small message
// written here costs the formatting and one system call, and the coroutine never suspends.
// The bytes are exactly Beast's (a test compares them). A chunked message is left to Beast.
// Thread-safety: the stream is the caller's; one write at a time on it, as with Beast.

#include <span>
#include <string>
#include <string_view>

#include "net/asio.h"

namespace tandem::net {

using StringRequest = http::request<http::string_body>;
using StringResponse = http::response<http::string_body>;

// The start line and the fields, ending with the blank line, as Beast's serializer writes them.
std::string message_head(const StringRequest& request);
std::string message_head(const StringResponse& response);

// Writes `parts` whole, in order: first (up to kMaxParts) in one sendmsg that does not wait,
// then, only for what the socket did not take, an asynchronous write on `stream`. The caller
// keeps the parts alive until the write completes. The error is the socket's.
inline constexpr size_t kMaxParts = 4;
awaitable<boost::system::error_code> write_parts(beast::tcp_stream& stream,
                                                 std::span<const std::string_view> parts);

// "<size in lowercase hex>\r\n": what precedes a chunk of `size` bytes in a chunked body, as
// Beast's make_chunk writes it. The chunk itself ends with "\r\n"; the last one is "0\r\n\r\n".
std::string chunk_size_line(size_t size);

// Writes the whole message; the error is the socket's (none when every byte went out).
awaitable<boost::system::error_code> write_message(beast::tcp_stream& stream,
                                                   const StringRequest& request);
awaitable<boost::system::error_code> write_message(beast::tcp_stream& stream,
                                                   const StringResponse& response);

}  // namespace tandem::net
