#pragma once
// The one place that includes Boost.Asio and Beast. Under GCC 12, Asio's C++20 coroutine
// support needs <utility> first (std::exchange), so nobody includes Boost directly.

// clang-format off: a block of its own, so that sorting never moves it below Boost.
#include <utility>
// clang-format on

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace tandem::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
template <typename T>
using awaitable = boost::asio::awaitable<T>;
inline constexpr auto use_awaitable = boost::asio::use_awaitable;

}  // namespace tandem::net
