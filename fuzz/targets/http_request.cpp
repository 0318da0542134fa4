// The HTTP/1.1 front: a connection's bytes through Beast's request parser configured exactly as
// HttpServer's session() configures it (body and header limits of the default ServerConfig),
// then what the server does with each parsed request short of answering it: the path/query
// split, the X-Tandem-* routing headers, the query parameters of /v1/tandem/* and the body.

#include <string>
#include <vector>

#include "config/config.h"
#include "fuzz/chunks.h"
#include "fuzz/fuzz_targets.h"
#include "fuzz/property_check.h"
#include "fuzz/targets/completion_checks.h"
#include "net/asio.h"
#include "routing/policy.h"
#include "routing/shadow_report.h"
#include "server/gateway.h"  // kRoutedModel
#include "server/gateway_util.h"
#include "server/request_hints.h"

namespace tandem::fuzz {
namespace {

namespace asio = net::asio;
namespace http = net::http;
using Request = http::request<http::string_body>;
using upstream::ApiKind;

constexpr size_t kMaxRequests = 8;             // pipelined on one connection
constexpr int64_t kNowMs = 1'750'000'000'000;  // a fixed "now" for durations in ?since=

// A connection as Beast's synchronous read sees it: one piece of the bytes per read_some, then
// the end of the stream.
class PieceStream {
 public:
  explicit PieceStream(std::vector<std::string_view> pieces) : pieces_(std::move(pieces)) {}

  template <typename MutableBuffers>
  size_t read_some(const MutableBuffers& buffers, boost::system::error_code& ec) {
    while (next_ < pieces_.size() && pieces_[next_].empty()) {
      ++next_;
    }
    if (next_ == pieces_.size()) {
      ec = asio::error::eof;
      return 0;
    }
    std::string_view& piece = pieces_[next_];
    const size_t n = asio::buffer_copy(buffers, asio::buffer(piece.data(), piece.size()));
    piece.remove_prefix(n);
    ec = {};
    return n;
  }

  template <typename MutableBuffers>
  size_t read_some(const MutableBuffers& buffers) {
    boost::system::error_code ec;
    const size_t n = read_some(buffers, ec);
    if (ec) {
      throw boost::system::system_error(ec);
    }
    return n;
  }

 private:
  std::vector<std::string_view> pieces_;
  size_t next_ = 0;
};

// As HttpServer's routing_headers().
server::RoutingHeaders routing_headers(const Request& req) {
  auto field = [&](const char* name) {
    const auto value = req[name];
    return std::string(value.data(), value.size());
  };
  server::RoutingHeaders h;
  h.privacy = field("X-Tandem-Privacy");
  h.latency_budget = field("X-Tandem-Latency-Budget-Ms");
  h.client = field("X-Tandem-Client");
  h.pattern = field("X-Tandem-Pattern");
  h.review = field("X-Tandem-Review");
  return h;
}

void check_hints(const server::RoutingHeaders& headers, const config::ClientKey* key) {
  auto hints = server::request_hints(headers, key);
  if (const auto* error = std::get_if<server::ApiError>(&hints)) {
    check_client_error(*error);
    FUZZ_CHECK(error->param.rfind("X-Tandem-", 0) == 0);
    return;
  }
  const auto& h = std::get<routing::RequestHints>(hints);
  FUZZ_CHECK(h.privacy_header == !headers.privacy.empty());
  FUZZ_CHECK(h.review_header == !headers.review.empty());
  FUZZ_CHECK(h.latency_budget_ms.has_value() == !headers.latency_budget.empty());
  FUZZ_CHECK(!h.latency_budget_ms || *h.latency_budget_ms > 0);
  bool known_pattern = h.pattern.empty();
  for (const char* name : routing::kPatternNames) {
    known_pattern = known_pattern || h.pattern == name;
  }
  FUZZ_CHECK(known_pattern);
  FUZZ_CHECK(h.pattern.empty() == headers.pattern.empty());
  if (key == nullptr) {
    FUZZ_CHECK(h.client == headers.client);
    FUZZ_CHECK(h.client.size() <= 256);
    FUZZ_CHECK(!h.key_local_only);
  } else {
    FUZZ_CHECK(h.client.rfind(key->name, 0) == 0);
    FUZZ_CHECK(h.key_local_only == (key->privacy == "local-only"));
  }
}

// The query parameters GET /v1/tandem/{reviews,audit,shadow} read.
void check_query(const std::string& query) {
  for (const char* key : {"status", "limit", "since", "since_ms", "upstream"}) {
    const auto value = server::query_value(query, key);
    if (!value) {
      continue;
    }
    FUZZ_CHECK(value->find('&') == std::string::npos);
    FUZZ_CHECK(query.find(key) != std::string::npos);
    if (std::string_view(key) != "since") {
      continue;
    }
    const auto since = routing::parse_since(*value, kNowMs);
    if (!since) {
      FUZZ_CHECK(since.error().code == ErrorCode::kInvalidArgument);
    } else if (!value->empty() &&
               std::string_view("smhdw").find(value->back()) != std::string_view::npos) {
      // A duration reaches back at most to the epoch.
      FUZZ_CHECK_MSG(since.value() >= 0 && since.value() <= kNowMs, *value);
    }
  }
}

void check_request(const Request& req, const config::ServerConfig& server) {
  FUZZ_CHECK(req.body().size() <= server.max_body_bytes);
  // Everything the header holds was inside header_limit bytes.
  size_t header_bytes = req.target().size() + req.method_string().size();
  for (const auto& field : req) {
    header_bytes += field.name_string().size() + field.value().size();
  }
  FUZZ_CHECK(header_bytes <= server.max_header_bytes);

  // As session() splits the target.
  const std::string target(req.target());
  const std::string path = target.substr(0, target.find('?'));
  const std::string query = target.size() > path.size() ? target.substr(path.size() + 1) : "";
  FUZZ_CHECK(path.find('?') == std::string::npos);
  FUZZ_CHECK(target.size() == path.size() || target.size() == path.size() + 1 + query.size());

  const server::RoutingHeaders headers = routing_headers(req);
  check_hints(headers, nullptr);
  config::ClientKey key;
  key.name = "team-a";
  key.privacy = "local-only";
  check_hints(headers, &key);
  if (path.rfind("/v1/tandem/", 0) == 0) {
    check_query(query);
  }
  if (req.method() != http::verb::post) {
    return;
  }
  if (path == "/v1/chat/completions") {
    (void)parse_completion_checked(req.body(), ApiKind::kChat, 256);
  } else if (path == "/v1/completions") {
    (void)parse_completion_checked(req.body(), ApiKind::kCompletion, 256);
  } else if (path == "/v1/tandem/route") {
    (void)parse_route_checked(req.body(), server::kRoutedModel);
  }
}

// Reads requests off the connection as session() does, one parser per request over one buffer.
// Returns, per request read, its method, target, fields and body, and last whether an error
// ended the connection.
std::vector<std::string> read_connection(std::vector<std::string_view> pieces,
                                         const config::ServerConfig& server, bool check) {
  PieceStream stream(std::move(pieces));
  net::beast::flat_buffer buffer;
  std::vector<std::string> seen;
  for (size_t i = 0; i < kMaxRequests; ++i) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(server.max_body_bytes);
    parser.header_limit(static_cast<uint32_t>(server.max_header_bytes));
    boost::system::error_code ec;
    http::read(stream, buffer, parser, ec);
    if (ec) {
      // Which error depends on the reads: Beast parses a line at once when it has all of it,
      // but after a short read waits for the header's end. Either way the server answers 400.
      seen.push_back("error");
      break;
    }
    Request req = parser.release();
    std::string summary = std::string(req.method_string()) + ' ' + std::string(req.target());
    for (const auto& field : req) {
      summary += '\n' + std::string(field.name_string()) + ": " + std::string(field.value());
    }
    seen.push_back(summary + "\n\n" + req.body());
    if (check) {
      check_request(req, server);
    }
    if (!req.keep_alive()) {
      break;
    }
  }
  return seen;
}

}  // namespace

void fuzz_http_request(const uint8_t* data, size_t size) {
  const std::string_view bytes = as_text(data, size);
  const config::ServerConfig server;  // max_body_bytes 1 MiB, max_header_bytes 16 KiB
  const auto whole = read_connection({bytes}, server, /*check=*/true);
  // TCP delivers the same bytes in arbitrary segments: the requests must not depend on them.
  const auto pieces = read_connection(derived_pieces(bytes, 16), server, /*check=*/false);
  FUZZ_CHECK(whole == pieces);
}

}  // namespace tandem::fuzz
