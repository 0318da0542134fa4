#include "net/http_write.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <string_view>
#include <vector>

#include <sys/socket.h>
#include <sys/uio.h>

namespace tandem::net {
namespace {

using boost::system::error_code;

void append(std::string& out, beast::string_view text) {
  out.append(text.data(), text.size());
}

void append_version(std::string& out, unsigned version) {
  out += "HTTP/";
  out += static_cast<char>('0' + version / 10);
  out += '.';
  out += static_cast<char>('0' + version % 10);
}

void append_fields(std::string& out, const http::fields& fields) {
  for (const auto& field : fields) {
    append(out, field.name_string());
    out += ": ";
    append(out, field.value());
    out += "\r\n";
  }
  out += "\r\n";
}

// One sendmsg that does not wait: the bytes the socket took (0 when it would have blocked).
// MSG_NOSIGNAL: a peer that has gone answers EPIPE, not a signal that ends the process.
size_t send_now(int socket, std::span<const std::string_view> parts, error_code& ec) {
  std::array<iovec, kMaxParts> vectors{};
  for (size_t i = 0; i < parts.size(); ++i) {
    vectors[i] = iovec{const_cast<char*>(parts[i].data()), parts[i].size()};
  }
  msghdr message{};
  message.msg_iov = vectors.data();
  message.msg_iovlen = parts.size();
  while (true) {
    const ssize_t sent = ::sendmsg(socket, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent >= 0) {
      return static_cast<size_t>(sent);
    }
    if (errno == EINTR) {
      continue;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      ec.assign(errno, boost::system::system_category());
    }
    return 0;
  }
}

template <bool kIsRequest>
awaitable<error_code> write_whole(beast::tcp_stream& stream,
                                  const http::message<kIsRequest, http::string_body>& message) {
  if (message.chunked()) {
    error_code ec;
    co_await http::async_write(stream, message, asio::redirect_error(use_awaitable, ec));
    co_return ec;
  }
  const std::string head = message_head(message);
  const std::array<std::string_view, 2> parts{head, message.body()};
  const error_code ec = co_await write_parts(stream, parts);
  co_return ec;
}

}  // namespace

std::string message_head(const StringRequest& request) {
  std::string out;
  out.reserve(256);
  append(out, request.method_string());
  out += ' ';
  append(out, request.target());
  out += ' ';
  append_version(out, request.version());
  out += "\r\n";
  append_fields(out, request);
  return out;
}

std::string message_head(const StringResponse& response) {
  std::string out;
  out.reserve(256);
  append_version(out, response.version());
  const unsigned code = response.result_int();
  out += ' ';
  out += static_cast<char>('0' + code / 100);
  out += static_cast<char>('0' + code / 10 % 10);
  out += static_cast<char>('0' + code % 10);
  out += ' ';
  const auto reason = response.reason();
  append(out, reason.empty() ? http::obsolete_reason(static_cast<http::status>(code)) : reason);
  out += "\r\n";
  append_fields(out, response);
  return out;
}

awaitable<error_code> write_parts(beast::tcp_stream& stream,
                                  std::span<const std::string_view> parts) {
  error_code ec;
  // More parts than one sendmsg here takes are all left to the asynchronous write.
  size_t sent =
      parts.size() <= kMaxParts ? send_now(stream.socket().native_handle(), parts, ec) : 0;
  size_t total = 0;
  for (const auto part : parts) {
    total += part.size();
  }
  if (ec || sent == total) {
    co_return ec;
  }
  std::vector<asio::const_buffer> rest;  // only when the socket was full: allocation is fine
  for (const auto part : parts) {
    const size_t skipped = std::min(sent, part.size());
    sent -= skipped;
    if (skipped < part.size()) {
      rest.emplace_back(part.data() + skipped, part.size() - skipped);
    }
  }
  co_await asio::async_write(stream, rest, asio::redirect_error(use_awaitable, ec));
  co_return ec;
}

std::string chunk_size_line(size_t size) {
  std::array<char, 2 * sizeof(size_t)> digits{};
  size_t first = digits.size();
  do {
    digits[--first] = "0123456789abcdef"[size & 0xf];
    size >>= 4;
  } while (size != 0);
  std::string line(digits.data() + first, digits.size() - first);
  line += "\r\n";
  return line;
}

awaitable<error_code> write_message(beast::tcp_stream& stream, const StringRequest& request) {
  return write_whole(stream, request);
}

awaitable<error_code> write_message(beast::tcp_stream& stream, const StringResponse& response) {
  return write_whole(stream, response);
}

}  // namespace tandem::net
