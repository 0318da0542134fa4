#include "net/http_read.h"

namespace tandem::net {
namespace {

using boost::system::error_code;

// Beast's read_size for one socket read: at most 64 KiB, at least what the buffer has spare.
constexpr size_t kMaxReadSize = 65536;

// One step of http::async_read_some: parse what is buffered, read the socket only while the
// parser needs more.
template <bool kIsRequest>
awaitable<error_code> parse_or_read(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                                    http::basic_parser<kIsRequest>& parser) {
  error_code ec;
  while (true) {
    if (buffer.size() > 0) {
      const size_t used = parser.put(buffer.data(), ec);
      buffer.consume(used);
      if (ec != http::error::need_more) {
        co_return ec;
      }
      ec = {};
    }
    const size_t size = beast::read_size(buffer, kMaxReadSize);
    if (size == 0) {
      co_return http::error::buffer_overflow;
    }
    const auto space = buffer.prepare(size);
    const size_t read =
        co_await stream.async_read_some(space, asio::redirect_error(use_awaitable, ec));
    buffer.commit(read);
    if (ec == asio::error::eof) {
      if (!parser.got_some()) {
        co_return http::error::end_of_stream;
      }
      // A message whose end is the peer's close (a response without a length).
      ec = {};
      parser.put_eof(ec);
      co_return ec;
    }
    if (ec) {
      co_return ec;
    }
  }
}

enum class Until { kHeader, kMessage };

// Steps until the header, or the whole message, is parsed: http::async_read's loop.
template <bool kIsRequest>
awaitable<error_code> read_until(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                                 http::basic_parser<kIsRequest>& parser, Until until) {
  parser.eager(until == Until::kMessage);  // as Beast's: a whole message parses its body at once
  while (until == Until::kHeader ? !parser.is_header_done() : !parser.is_done()) {
    const error_code ec = co_await parse_or_read(stream, buffer, parser);
    if (ec) {
      co_return ec;
    }
  }
  co_return error_code{};
}

}  // namespace

template <bool kIsRequest>
awaitable<error_code> read_message(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                                   http::basic_parser<kIsRequest>& parser) {
  const error_code ec = co_await read_until(stream, buffer, parser, Until::kMessage);
  co_return ec;
}

template <bool kIsRequest>
awaitable<error_code> read_header(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                                  http::basic_parser<kIsRequest>& parser) {
  const error_code ec = co_await read_until(stream, buffer, parser, Until::kHeader);
  co_return ec;
}

template <bool kIsRequest>
awaitable<error_code> read_some(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                                http::basic_parser<kIsRequest>& parser) {
  const error_code ec = co_await parse_or_read(stream, buffer, parser);
  co_return ec;
}

template awaitable<error_code> read_message(beast::tcp_stream&, beast::flat_buffer&,
                                            http::basic_parser<true>&);
template awaitable<error_code> read_message(beast::tcp_stream&, beast::flat_buffer&,
                                            http::basic_parser<false>&);
template awaitable<error_code> read_header(beast::tcp_stream&, beast::flat_buffer&,
                                           http::basic_parser<true>&);
template awaitable<error_code> read_header(beast::tcp_stream&, beast::flat_buffer&,
                                           http::basic_parser<false>&);
template awaitable<error_code> read_some(beast::tcp_stream&, beast::flat_buffer&,
                                         http::basic_parser<true>&);
template awaitable<error_code> read_some(beast::tcp_stream&, beast::flat_buffer&,
                                         http::basic_parser<false>&);

}  // namespace tandem::net
