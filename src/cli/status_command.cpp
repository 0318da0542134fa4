// `tandem status`: the running gateway's status document (GET /v1/tandem/status) as JSON —
// traffic per tier, latency, cost, quality, model versions and skew, offline and device state,
// circuits, flagged clients, the review queue. One section with --section.

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "net/asio.h"
#include "net/spawn.h"

namespace tandem::cli {
namespace {

namespace asio = net::asio;
namespace beast = net::beast;
namespace http = net::http;

struct StatusFlags {
  std::string url = "http://127.0.0.1:8080";
  std::string key_env = "TANDEM_API_KEY";
  std::string section;
  uint32_t timeout_ms = 5000;
};

struct HostPort {
  std::string host;
  std::string port;
};

// http://host[:port][/] only: the status API is read on the gateway's own host or network.
std::optional<HostPort> parse_url(const std::string& url, std::string& error) {
  constexpr std::string_view kHttp = "http://";
  if (url.rfind(kHttp, 0) != 0) {
    error = "--url must start with http:// (got '" + url + "')";
    return std::nullopt;
  }
  std::string rest = url.substr(kHttp.size());
  while (!rest.empty() && rest.back() == '/') {
    rest.pop_back();
  }
  if (rest.empty() || rest.find('/') != std::string::npos) {
    error = "--url must be http://HOST[:PORT] without a path (got '" + url + "')";
    return std::nullopt;
  }
  HostPort out{rest, "80"};
  if (rest.front() == '[') {  // [::1]:8080
    const size_t close = rest.find(']');
    if (close == std::string::npos) {
      error = "--url has an unclosed IPv6 address: '" + url + "'";
      return std::nullopt;
    }
    out.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') {
        error = "--url has text after the IPv6 address: '" + url + "'";
        return std::nullopt;
      }
      out.port = rest.substr(close + 2);
    }
  } else if (const size_t colon = rest.rfind(':'); colon != std::string::npos) {
    out.host = rest.substr(0, colon);
    out.port = rest.substr(colon + 1);
  }
  const bool digits = !out.port.empty() && out.port.size() <= 5 &&
                      out.port.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoi(out.port) < 1 || std::stoi(out.port) > 65535) {
    error = "--url has a bad port (1 to 65535): '" + url + "'";
    return std::nullopt;
  }
  if (out.host.empty()) {
    error = "--url has no host: '" + url + "'";
    return std::nullopt;
  }
  return out;
}

// GET /v1/tandem/status from the gateway, within --timeout-ms; the response, or an empty
// optional with `failure` saying why.
std::optional<http::response<http::string_body>> fetch_status(const StatusFlags& flags,
                                                              const HostPort& address,
                                                              std::string& failure) {
  // The exchange runs asynchronously so that --timeout-ms bounds all of it: a tcp_stream's
  // deadline applies to asynchronous operations only.
  asio::io_context ioc;
  beast::tcp_stream stream(ioc);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64u << 20);
  const char* key = std::getenv(flags.key_env.c_str());
  auto exchange = [&]() -> net::awaitable<void> {
    net::tcp::resolver resolver(ioc);
    boost::system::error_code ec;
    const auto endpoints = co_await resolver.async_resolve(
        address.host, address.port, asio::redirect_error(net::use_awaitable, ec));
    if (ec) {
      failure = "cannot resolve " + address.host + ": " + ec.message();
      co_return;
    }
    stream.expires_after(std::chrono::milliseconds(flags.timeout_ms));
    co_await stream.async_connect(endpoints, asio::redirect_error(net::use_awaitable, ec));
    if (ec) {
      failure = "cannot reach the gateway at " + flags.url + ": " + ec.message() +
                " (is `tandem serve` running there?)";
      co_return;
    }
    http::request<http::empty_body> req{http::verb::get, "/v1/tandem/status", 11};
    req.set(http::field::host, address.host);
    req.set(http::field::user_agent, "tandem-status");
    if (key != nullptr && *key != '\0') {
      req.set(http::field::authorization, std::string("Bearer ") + key);
    }
    co_await http::async_write(stream, req, asio::redirect_error(net::use_awaitable, ec));
    if (!ec) {
      co_await http::async_read(stream, buffer, parser,
                                asio::redirect_error(net::use_awaitable, ec));
    }
    if (ec) {
      failure = "no answer from " + flags.url + " within " + std::to_string(flags.timeout_ms) +
                " ms: " + ec.message();
    }
  };
  asio::co_spawn(ioc, exchange(), [&failure](std::exception_ptr thrown) {
    if (thrown) {
      failure = "the exchange with the gateway failed: " + net::exception_text(thrown);
    }
  });
  ioc.run();
  if (!failure.empty()) {
    return std::nullopt;
  }
  return parser.release();
}

// Prints the status document (or its --section) on stdout; the exit code.
int print_status(const StatusFlags& flags, const http::response<http::string_body>& res) {
  const auto body = nlohmann::json::parse(res.body(), nullptr, false);
  if (res.result_int() != 200) {
    std::string message = res.body().substr(0, 300);
    if (body.is_object() && body.contains("error") && body["error"].is_object() &&
        body["error"].contains("message") && body["error"]["message"].is_string()) {
      message = body["error"]["message"].get<std::string>();
    }
    std::cerr << "tandem status: the gateway answered " << res.result_int() << ": " << message;
    if (res.result_int() == 401 || res.result_int() == 403) {
      std::cerr << " (set " << flags.key_env << " to an operator's key)";
    }
    std::cerr << "\n";
    return 1;
  }
  if (body.is_discarded() || !body.is_object()) {
    std::cerr << "tandem status: the gateway's answer is not JSON\n";
    return 1;
  }
  if (!flags.section.empty()) {
    if (!body.contains(flags.section)) {
      std::string sections;
      for (const auto& [name, _] : body.items()) {
        sections += (sections.empty() ? "" : ", ") + name;
      }
      std::cerr << "tandem status: no section '" << flags.section << "'; sections: " << sections
                << "\n";
      return 1;
    }
    std::cout << body[flags.section].dump(2) << "\n";
    return 0;
  }
  std::cout << body.dump(2) << "\n";
  return 0;
}

int run_status(const StatusFlags& flags) {
  std::string error;
  const auto target = parse_url(flags.url, error);
  if (!target) {
    std::cerr << "tandem status: " << error << "\n";
    return 1;
  }
  std::string failure;
  const auto response = fetch_status(flags, *target, failure);
  if (!response) {
    std::cerr << "tandem status: " << failure << "\n";
    return 1;
  }
  return print_status(flags, *response);
}

}  // namespace

std::function<int()> add_status_command(CLI::App& app) {
  auto flags = std::make_shared<StatusFlags>();
  CLI::App* cmd = app.add_subcommand(
      "status",
      "Show a running gateway's status as JSON: traffic per tier, latency, cost, quality, model "
      "versions and skew, offline and device state, circuits, flagged clients, reviews");
  cmd->add_option("--url", flags->url, "The gateway's address")->capture_default_str();
  cmd->add_option("--api-key-env", flags->key_env,
                  "Environment variable holding an operator's API key (sent when set)")
      ->capture_default_str();
  cmd->add_option("--section", flags->section,
                  "Print one section only (traffic, latency_ms, cost, models, device, ...)");
  cmd->add_option("--timeout-ms", flags->timeout_ms, "Give up after this long")
      ->capture_default_str()
      ->check(CLI::Range(1u, 600000u));
  return [flags] { return run_status(*flags); };
}

}  // namespace tandem::cli
