#pragma once
// Two connected TCP sockets on loopback for the net tests: what one writes the other reads,
// with Nagle off so small writes arrive as they are written.

#include <utility>

#include "net/asio.h"

namespace tandem::net::testing {

// {client, server}, both on `io`.
inline std::pair<tcp::socket, tcp::socket> connected_pair(asio::io_context& io) {
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  tcp::socket client(io);
  client.connect(acceptor.local_endpoint());
  client.set_option(tcp::no_delay(true));
  tcp::socket server = acceptor.accept();
  return {std::move(client), std::move(server)};
}

}  // namespace tandem::net::testing
