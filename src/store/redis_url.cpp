// Redis URLs and options: parsing redis:// and unix:// URLs into an endpoint, checking the
// other options, and describing an endpoint without its credentials. Messages quote a URL
// only with its password replaced.

#include "store/redis_url.h"

#include <algorithm>

#include "common/hex.h"
#include "store/redis_client.h"

namespace tandem::store {
namespace {

constexpr uint32_t kMaxTimeoutMs = 600'000;
constexpr size_t kMaxPrefixBytes = 128;
constexpr size_t kMaxUrlBytes = 4096;
constexpr int kMaxDatabase = 1'000'000;
constexpr size_t kMaxEchoBytes = 200;  // of a URL quoted in a message

bool is_digits(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

// The URL with anything that may be a password replaced by "***", cut to kMaxEchoBytes, so
// that a message may quote it: the password of the user-info, and a "port" that is not a
// number (someone who wrote redis://:secret without the '@').
std::string redacted(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    return url.size() > kMaxEchoBytes ? std::string(url.substr(0, kMaxEchoBytes)) + "…"
                                      : std::string(url);
  }
  const size_t start = scheme_end + 3;
  const size_t end = std::min(url.find_first_of("/?", start), url.size());
  std::string_view authority = url.substr(start, end - start);
  std::string out(url.substr(0, start));
  const size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    const size_t colon = userinfo.find(':');
    out +=
        colon == std::string_view::npos ? "***" : std::string(userinfo.substr(0, colon)) + ":***";
    out += '@';
    authority = authority.substr(at + 1);
  }
  const size_t bracket = authority.rfind(']');
  const size_t colon = authority.find(':', bracket == std::string_view::npos ? 0 : bracket);
  if (colon != std::string_view::npos && !is_digits(authority.substr(colon + 1))) {
    out += std::string(authority.substr(0, colon)) + ":***";
  } else {
    out += std::string(authority);
  }
  out += std::string(url.substr(end));
  if (out.size() > kMaxEchoBytes) {
    out = out.substr(0, kMaxEchoBytes) + "…";
  }
  return out;
}

Error url_error(std::string_view url, const std::string& problem) {
  return make_error(ErrorCode::kInvalidArgument,
                    "redis URL '" + redacted(url) + "' " + problem +
                        " (expected redis://[[user]:password@]host[:port][/db] or "
                        "unix:///path/to.sock[?db=N])");
}

// %XX escapes in the user-info; `what` ("user name", "password") names the part in errors,
// which never quote it.
Result<std::string> percent_decode(std::string_view url, std::string_view text,
                                   std::string_view what) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) {
      return url_error(url, "has a bad %-escape in its " + std::string(what));
    }
    const int high = hex_digit_value(text[i + 1]);
    const int low = hex_digit_value(text[i + 2]);
    if (high < 0 || low < 0) {
      return url_error(url, "has a bad %-escape in its " + std::string(what));
    }
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return out;
}

Result<int> parse_db(std::string_view url, std::string_view text) {
  if (!is_digits(text) || text.size() > 7 || std::stoi(std::string(text)) > kMaxDatabase) {
    return url_error(
        url, "has a bad database number (expected 0.." + std::to_string(kMaxDatabase) + ")");
  }
  return std::stoi(std::string(text));
}

Result<RedisEndpoint> parse_unix_url(std::string_view url) {
  RedisEndpoint endpoint;
  std::string_view rest = url.substr(std::string_view("unix://").size());
  const size_t query = rest.find('?');
  std::string_view path = rest.substr(0, query);
  if (path.empty() || path[0] != '/') {
    return url_error(url, "needs an absolute socket path (three slashes: unix:///run/redis.sock)");
  }
  endpoint.unix_path = std::string(path);
  if (query != std::string_view::npos) {
    std::string_view parameters = rest.substr(query + 1);
    if (parameters.substr(0, 3) != "db=") {
      return url_error(url, "has an unknown parameter (only ?db=N is understood)");
    }
    auto db = parse_db(url, parameters.substr(3));
    if (!db) {
      return db.error();
    }
    endpoint.db = *db;
  }
  return endpoint;
}

// The user-info before '@' in `authority`, if any, into the endpoint; returns the rest.
Result<std::string_view> parse_userinfo(std::string_view url, std::string_view authority,
                                        RedisEndpoint& endpoint) {
  const size_t at = authority.rfind('@');
  if (at == std::string_view::npos) {
    return authority;
  }
  std::string_view userinfo = authority.substr(0, at);
  const size_t colon = userinfo.find(':');
  if (colon == std::string_view::npos) {
    return url_error(url,
                     "has user-info without a password; write redis://:password@host "
                     "(or redis://user:password@host)");
  }
  auto user = percent_decode(url, userinfo.substr(0, colon), "user name");
  if (!user) {
    return user.error();
  }
  auto password = percent_decode(url, userinfo.substr(colon + 1), "password");
  if (!password) {
    return password.error();
  }
  endpoint.username = std::move(*user);
  endpoint.password = std::move(*password);
  return authority.substr(at + 1);
}

// host, [v6-host] or either with ":port".
Status parse_host_port(std::string_view url, std::string_view authority, RedisEndpoint& endpoint) {
  std::string_view port;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return url_error(url, "has an IPv6 address without its closing ']'");
    }
    endpoint.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') {
        return url_error(url, "has text after the IPv6 address where a ':port' belongs");
      }
      port = after.substr(1);
      if (port.empty()) {
        return url_error(url, "has an empty port");
      }
    }
  } else {
    const size_t colon = authority.find(':');
    endpoint.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      if (port.empty()) {
        return url_error(url, "has an empty port");
      }
    }
  }
  if (endpoint.host.empty()) {
    return url_error(url, "has no host");
  }
  if (!port.empty()) {
    if (!is_digits(port) || port.size() > 5 || std::stoi(std::string(port)) < 1 ||
        std::stoi(std::string(port)) > 65535) {
      return url_error(url, "has a bad port (expected a number 1..65535)");
    }
    endpoint.port = static_cast<uint16_t>(std::stoi(std::string(port)));
  }
  return {};
}

// What follows the authority: nothing, "/", or "/db"; never query parameters.
Status parse_db_path(std::string_view url, std::string_view path, RedisEndpoint& endpoint) {
  if (!path.empty() && path[0] == '?') {
    return url_error(url, "has query parameters, which redis:// URLs do not take");
  }
  if (path.size() > 1) {
    std::string_view db = path.substr(1);
    if (db.find('?') != std::string_view::npos) {
      return url_error(url, "has query parameters, which redis:// URLs do not take");
    }
    auto number = parse_db(url, db);
    if (!number) {
      return number.error();
    }
    endpoint.db = *number;
  }
  return {};
}

Result<RedisEndpoint> parse_tcp_url(std::string_view url) {
  RedisEndpoint endpoint;
  std::string_view rest = url.substr(std::string_view("redis://").size());
  const size_t authority_end = std::min(rest.find_first_of("/?"), rest.size());
  auto host_port = parse_userinfo(url, rest.substr(0, authority_end), endpoint);
  if (!host_port) {
    return host_port.error();
  }
  if (Status status = parse_host_port(url, *host_port, endpoint); !status) {
    return status.error();
  }
  if (Status status = parse_db_path(url, rest.substr(authority_end), endpoint); !status) {
    return status.error();
  }
  return endpoint;
}

}  // namespace

std::string describe(const RedisEndpoint& endpoint) {
  if (!endpoint.unix_path.empty()) {
    return "unix://" + endpoint.unix_path +
           (endpoint.db != 0 ? "?db=" + std::to_string(endpoint.db) : "");
  }
  const bool ipv6 = endpoint.host.find(':') != std::string::npos;
  return "redis://" + (ipv6 ? "[" + endpoint.host + "]" : endpoint.host) + ":" +
         std::to_string(endpoint.port) + "/" + std::to_string(endpoint.db);
}

Result<RedisEndpoint> parse_redis_url(std::string_view url) {
  if (url.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the redis URL is empty (expected redis://host:port or "
                      "unix:///path/to.sock)");
  }
  if (url.size() > kMaxUrlBytes) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the redis URL is " + std::to_string(url.size()) + " bytes; at most " +
                          std::to_string(kMaxUrlBytes) + " are read");
  }
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return url_error(url, "contains a space or a control character");
    }
  }
  if (url.substr(0, 8) == "redis://") {
    return parse_tcp_url(url);
  }
  if (url.substr(0, 7) == "unix://") {
    return parse_unix_url(url);
  }
  if (url.substr(0, 9) == "rediss://") {
    return url_error(url, "asks for TLS (rediss://), which this build does not support");
  }
  return url_error(url, "has an unknown scheme");
}

Result<RedisEndpoint> check_redis_options(const RedisOptions& options) {
  auto endpoint = parse_redis_url(options.url);
  if (!endpoint) {
    return endpoint.error();
  }
  const std::pair<const char*, uint32_t> timeouts[] = {
      {"connect_timeout_ms", options.connect_timeout_ms},
      {"command_timeout_ms", options.command_timeout_ms}};
  for (const auto& [name, value] : timeouts) {
    if (value < 1 || value > kMaxTimeoutMs) {
      return make_error(ErrorCode::kInvalidArgument, std::string("redis ") + name + " must be 1.." +
                                                         std::to_string(kMaxTimeoutMs) + ", not " +
                                                         std::to_string(value));
    }
  }
  if (options.prefix.empty() || options.prefix.size() > kMaxPrefixBytes) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the redis key prefix must be 1.." + std::to_string(kMaxPrefixBytes) +
                          " bytes, not " + std::to_string(options.prefix.size()));
  }
  for (char c : options.prefix) {
    if (c <= 0x20 || c >= 0x7f) {
      return make_error(ErrorCode::kInvalidArgument,
                        "the redis key prefix may hold printable ASCII without spaces only");
    }
  }
  if (!options.password.empty()) {
    endpoint->password = options.password;
  }
  return endpoint;
}

}  // namespace tandem::store
