#pragma once
// Reading HTTP/1.1 messages with Beast's parser, without Beast's composed read operations.
// The parser is fed from the stream's buffer first; the socket is read only when the parser
// needs more bytes, through the stream, so its timeout applies as before.
// Why: http::async_read wraps every socket read in two composed operations, each holding a
// type-erased executor and its work guard, and completes through the scheduler even when the
// bytes were already buffered (a body that arrived with its header); two messages are read per
// relayed request. Here a read costs the socket read and the parser.
// The outcomes are Beast's: the same errors (end_of_stream, body_limit, need_buffer...), the
// same eager parsing for a whole message, a message ended by the peer's close completed by
// put_eof (a test reads the same bytes both ways).
// Thread-safety: the stream, buffer and parser are the caller's; one read at a time on them.

#include "net/asio.h"

namespace tandem::net {

// Reads until the whole message is parsed (eager), as http::async_read.
template <bool kIsRequest>
awaitable<boost::system::error_code> read_message(beast::tcp_stream& stream,
                                                  beast::flat_buffer& buffer,
                                                  http::basic_parser<kIsRequest>& parser);

// Reads until the header is parsed, as http::async_read_header.
template <bool kIsRequest>
awaitable<boost::system::error_code> read_header(beast::tcp_stream& stream,
                                                 beast::flat_buffer& buffer,
                                                 http::basic_parser<kIsRequest>& parser);

// Reads until the parser makes progress, as http::async_read_some: with a buffer_body,
// http::error::need_buffer when its buffer is full.
template <bool kIsRequest>
awaitable<boost::system::error_code> read_some(beast::tcp_stream& stream,
                                               beast::flat_buffer& buffer,
                                               http::basic_parser<kIsRequest>& parser);

}  // namespace tandem::net
