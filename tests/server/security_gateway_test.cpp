// The gateway's security defaults over real HTTP (docs/SECURITY.md): a key on every endpoint
// but the public ones, admin and reviewer roles, request limits, connection and stream limits,
// logs without prompts or keys, and static files that cannot leave their folder.

#include <cstdio>
#include <fstream>

#include <fcntl.h>
#include <unistd.h>

#include "test_harness.h"

namespace tandem::test {
namespace {

const std::map<std::string, std::string> kNoKey;
const std::map<std::string, std::string> kWrongKey = {{"Authorization", "Bearer sk-wrong"}};
const std::map<std::string, std::string> kClient = {{"Authorization", "Bearer client-key"}};
const std::map<std::string, std::string> kReviewer = {{"Authorization", "Bearer reviewer-key"}};
const std::map<std::string, std::string> kAdmin = {{"Authorization", "Bearer admin-key"}};

std::string keys_yaml(const std::string& server_extra = "") {
  return "server:\n" + server_extra +
         "  api_keys:\n"
         "    - {name: app, key_sha256: " +
         config::sha256_hex("client-key") +
         "}\n"
         "    - {name: desk, key_sha256: " +
         config::sha256_hex("reviewer-key") +
         ", reviewer: true}\n"
         "    - {name: ops, key_sha256: " +
         config::sha256_hex("admin-key") + ", admin: true}\n";
}

// A cloud tier on the fault upstream: `fast` answers at once, `slow` streams a piece every
// 1.5 s, so a stream stays open while a test looks at the limits (kHeldPieces).
std::string cloud_yaml(const FaultUpstream& fault) {
  return "cloud:\n  upstreams:\n    - name: f\n      base_url: " + fault.base_url() +
         "\n      models: {fast: fault-ok, slow: fault-slow-1500}\n"
         "      health: {interval_ms: 0}\n";
}

// Pieces a held `slow` stream asks for: a minute of streaming, far longer than the checks that
// need it open take even on a slow machine. It ends when its client leaves, not by itself.
constexpr int kHeldPieces = 40;

std::string error_code(const HttpResult& r) {
  const json body = r.json_body();
  return body.contains("error") && body["error"]["code"].is_string()
             ? body["error"]["code"].get<std::string>()
             : "";
}

struct Endpoint {
  std::string method;
  std::string target;
  std::string body;
};

const std::vector<Endpoint> kProtectedEndpoints = {
    {"GET", "/v1/models", ""},
    {"POST", "/v1/chat/completions", chat("tandem", "hi", 2).dump()},
    {"POST", "/v1/completions", completion("hi", 2).dump()},
    {"GET", "/metrics", ""},
    {"GET", "/v1/tandem/status", ""},
    {"GET", "/v1/tandem/audit", ""},
    {"GET", "/v1/tandem/shadow", ""},
    {"GET", "/v1/tandem/reviews", ""},
    {"GET", "/v1/tandem/reviews/rev_0123", ""},
    {"POST", "/v1/tandem/route", R"({"messages":[{"role":"user","content":"hi"}]})"},
    {"POST", "/v1/tandem/canary", "{}"},
    {"GET", "/no/such/endpoint", ""},
};

TEST(SecurityGatewayTest, EveryEndpointButThePublicOnesNeedsAKey) {
  GatewayUnderTest gateway(keys_yaml());
  for (const auto& e : kProtectedEndpoints) {
    for (const auto* headers : {&kNoKey, &kWrongKey}) {
      const auto r = request(gateway.port(), e.method, e.target, e.body, *headers);
      EXPECT_EQ(r.status, 401) << e.method << " " << e.target << ": " << r.body;
      EXPECT_EQ(error_code(r), "invalid_api_key") << e.target;
      EXPECT_EQ(r.body.find("sk-wrong"), std::string::npos) << "the key was echoed";
    }
  }
  EXPECT_EQ(request(gateway.port(), "GET", "/health").status, 200);
  // The dashboard's files hold no data: a browser loads them, then asks for a key.
  EXPECT_EQ(request(gateway.port(), "GET", "/").status, 200);
  EXPECT_EQ(request(gateway.port(), "GET", "/dashboard/dashboard.js").status, 200);
}

TEST(SecurityGatewayTest, PublicPathsAreConfigurable) {
  GatewayUnderTest gateway(keys_yaml("  auth: {public_paths: [/metrics]}\n"));
  EXPECT_EQ(request(gateway.port(), "GET", "/health").status, 401);
  EXPECT_EQ(request(gateway.port(), "GET", "/health", "", kClient).status, 200);
  EXPECT_EQ(request(gateway.port(), "GET", "/").status, 401);
  // A path the operator made public is served to anyone, role checks included.
  const auto metrics = request(gateway.port(), "GET", "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("# TYPE tandem_"), std::string::npos) << metrics.body;
}

TEST(SecurityGatewayTest, AdminEndpointsNeedAnAdminKeyAndReviewsAReviewer) {
  GatewayUnderTest gateway(keys_yaml());
  for (const char* path :
       {"/metrics", "/v1/tandem/status", "/v1/tandem/audit", "/v1/tandem/shadow"}) {
    for (const auto* headers : {&kClient, &kReviewer}) {
      const auto r = request(gateway.port(), "GET", path, "", *headers);
      EXPECT_EQ(r.status, 403) << path << ": " << r.body;
      EXPECT_EQ(error_code(r), "not_an_admin") << path;
    }
    EXPECT_EQ(request(gateway.port(), "GET", path, "", kAdmin).status, 200) << path;
  }
  EXPECT_EQ(error_code(post(gateway.port(), "/v1/tandem/canary", json::object(), kReviewer)),
            "not_an_admin");
  const auto as_client = request(gateway.port(), "GET", "/v1/tandem/reviews", "", kClient);
  EXPECT_EQ(as_client.status, 403);
  EXPECT_EQ(error_code(as_client), "not_a_reviewer");
  EXPECT_EQ(request(gateway.port(), "GET", "/v1/tandem/reviews", "", kReviewer).status, 200);
  EXPECT_EQ(request(gateway.port(), "GET", "/v1/tandem/reviews", "", kAdmin).status, 200);
  // Clients use the API as before.
  EXPECT_EQ(post(gateway.port(), "/v1/chat/completions", chat("tandem", "hi", 2), kClient).status,
            200);
}

TEST(SecurityGatewayTest, ThePublicHealthDoesNotRepeatUpstreamErrors) {
  FaultUpstream fault;
  GatewayUnderTest keyed(keys_yaml() + cloud_yaml(fault));
  const json health = keyed.health();
  EXPECT_FALSE(health["cloud"]["upstreams"][0].contains("last_error")) << health.dump();
  GatewayUnderTest open(cloud_yaml(fault));
  EXPECT_TRUE(open.health()["cloud"]["upstreams"][0].contains("last_error"));
}

// Found by review: nlohmann's parser takes a NUL byte as the end of the text, so a body of one
// JSON value, a NUL byte and anything at all was accepted as that value on the Responses,
// embeddings, route and review endpoints. Every JSON body is now read whole.
TEST(SecurityGatewayTest, EveryJsonBodyIsReadWholePastANulByte) {
  FaultUpstream fault;
  GatewayUnderTest gateway(cloud_yaml(fault), /*with_edge=*/false);
  const std::string garbage = std::string(1, '\0') + "{not json";
  const std::vector<Endpoint> bodies = {
      {"POST", "/v1/chat/completions", chat("fast", "hi", 2).dump()},
      {"POST", "/v1/completions", R"({"model":"fast","prompt":"hi","max_tokens":2})"},
      {"POST", "/v1/responses", R"({"model":"fast","input":"hi"})"},
      {"POST", "/v1/embeddings", R"({"model":"fast","input":"hi"})"},
      {"POST", "/v1/tandem/route", R"({"messages":[{"role":"user","content":"hi"}]})"},
      {"POST", "/v1/tandem/reviews/rev_0123/answer", R"({"answer":"yes"})"},
  };
  for (const Endpoint& endpoint : bodies) {
    SCOPED_TRACE(endpoint.target);
    const HttpResult r = request(gateway.port(), endpoint.method, endpoint.target,
                                 endpoint.body + garbage, {{"Content-Type", "application/json"}});
    EXPECT_EQ(r.status, 400) << r.body;
    const json error = r.json_body()["error"];
    EXPECT_EQ(error["type"], "invalid_request_error") << r.body;
    // The body's own fault, not one the value without the garbage would have drawn too.
    EXPECT_NE(error["message"].get<std::string>().find("JSON"), std::string::npos) << r.body;
  }
}

TEST(SecurityGatewayTest, RequestsBeyondTheLimitsAreRefusedNamingTheLimit) {
  GatewayUnderTest gateway(
      "server:\n  max_body_bytes: 4096\n  max_header_bytes: 2048\n"
      "  limits: {max_messages: 3, max_tokens: 64}\nedge:\n  default_max_tokens: 16\n");
  json four = chat("tandem", "hi", 2);
  for (int i = 0; i < 3; ++i) {
    four["messages"].push_back({{"role", "user"}, {"content", "more"}});
  }
  const auto messages = post(gateway.port(), "/v1/chat/completions", four);
  EXPECT_EQ(messages.status, 400);
  EXPECT_EQ(messages.json_body()["error"]["param"], "messages");
  EXPECT_EQ(error_code(messages), "limit_exceeded");
  EXPECT_NE(messages.body.find("server.limits.max_messages"), std::string::npos);

  const auto tokens = post(gateway.port(), "/v1/chat/completions", chat("tandem", "hi", 65));
  EXPECT_EQ(tokens.status, 400);
  EXPECT_EQ(tokens.json_body()["error"]["param"], "max_tokens");
  EXPECT_EQ(post(gateway.port(), "/v1/chat/completions", chat("tandem", "hi", 64)).status, 200);
  json no_max = chat("tandem", "hi");
  no_max.erase("max_tokens");
  EXPECT_EQ(post(gateway.port(), "/v1/chat/completions", no_max).status, 200);

  const auto body =
      post(gateway.port(), "/v1/chat/completions", chat("tandem", std::string(5000, 'x'), 2));
  EXPECT_EQ(body.status, 413);
  const auto headers =
      request(gateway.port(), "GET", "/health", "", {{"X-Padding", std::string(3000, 'y')}});
  EXPECT_EQ(headers.status, 431);
  // The gateway is still there for well-behaved clients.
  EXPECT_EQ(request(gateway.port(), "GET", "/health").status, 200);
}

// Sends a request on a connection it keeps open (and does not read), until destroyed.
class HeldRequest {
 public:
  HeldRequest(uint16_t port, const json& body, const std::map<std::string, std::string>& headers)
      : socket_(ioc_) {
    boost::system::error_code ec;
    socket_.connect(net::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
    if (ec) {
      return;
    }
    const std::string text = raw_chat_request(body, headers);
    asio::write(socket_, asio::buffer(text), ec);
  }
  explicit HeldRequest(uint16_t port) : socket_(ioc_) {  // connects, sends nothing
    boost::system::error_code ec;
    socket_.connect(net::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
  }

 private:
  asio::io_context ioc_;
  net::tcp::socket socket_;
};

TEST(SecurityGatewayTest, EachKeyMayHoldOnlySoManyStreamsAtOnce) {
  FaultUpstream fault;
  GatewayUnderTest gateway(keys_yaml("  limits: {max_streams_per_key: 2}\n") + cloud_yaml(fault));
  {
    HeldRequest first(gateway.port(), chat("slow", "hi", kHeldPieces, true), kClient);
    HeldRequest second(gateway.port(), chat("slow", "hi", kHeldPieces, true), kClient);
    ASSERT_TRUE(eventually([&] { return fault.stats()["active_streams"].get<int>() == 2; }))
        << fault.stats().dump();
    auto third = post(gateway.port(), "/v1/chat/completions", chat("fast", "hi", 2, true), kClient);
    EXPECT_EQ(third.status, 429) << third.body;
    EXPECT_EQ(error_code(third), "too_many_streams");
    EXPECT_EQ(third.headers["Retry-After"], "1");
    // Other keys, and answers that are not streamed, are not held back.
    EXPECT_EQ(
        post(gateway.port(), "/v1/chat/completions", chat("fast", "hi", 2, true), kAdmin).status,
        200);
    EXPECT_EQ(post(gateway.port(), "/v1/chat/completions", chat("fast", "hi", 2), kClient).status,
              200);
  }
  // The clients left: their slots are free again (their streams would run for another minute).
  EXPECT_TRUE(eventually([&] {
    return post(gateway.port(), "/v1/chat/completions", chat("fast", "hi", 2, true), kClient)
               .status == 200;
  }));
}

TEST(SecurityGatewayTest, ConnectionsBeyondTheLimitAreRefusedAndTheRestServed) {
  GatewayUnderTest gateway("server:\n  max_connections: 3\n");
  auto idle = std::make_unique<std::vector<std::unique_ptr<HeldRequest>>>();
  for (int i = 0; i < 3; ++i) {
    idle->push_back(std::make_unique<HeldRequest>(gateway.port()));
  }
  HttpResult refused;
  ASSERT_TRUE(eventually([&] {
    refused = request(gateway.port(), "GET", "/health");
    return refused.status == 503;
  }));
  EXPECT_EQ(error_code(refused), "too_many_connections");
  EXPECT_EQ(refused.headers["Connection"], "close");
  idle->pop_back();
  EXPECT_TRUE(eventually([&] { return request(gateway.port(), "GET", "/health").status == 200; }));
}

TEST(SecurityGatewayTest, AKeyCannotDodgeTheGamingMonitorByRenamingItsClients) {
  FaultUpstream fault;
  std::string keys = "server:\n  api_keys:\n";
  for (const char* name : {"honest-0", "honest-1", "honest-2", "mallory"}) {
    keys += "    - {name: " + std::string(name) +
            ", key_sha256: " + config::sha256_hex(std::string(name) + "-key") + "}\n";
  }
  GatewayUnderTest gateway(
      keys + cloud_yaml(fault) +
      "operations:\n  gaming: {min_requests: 8, min_population: 20, escalation_cap: 0.25}\n");
  auto as = [](const std::string& key, const std::string& pattern, const std::string& client) {
    return std::map<std::string, std::string>{{"Authorization", "Bearer " + key + "-key"},
                                              {"X-Tandem-Pattern", pattern},
                                              {"X-Tandem-Client", client}};
  };
  for (int i = 0; i < 30; ++i) {
    const std::string key = "honest-" + std::to_string(i % 3);
    ASSERT_EQ(post(gateway.port(), "/v1/chat/completions", chat("tandem", "Once", 4),
                   as(key, i % 5 == 0 ? "cloud" : "edge", "user"))
                  .status,
              200);
  }
  // Every request of mallory's key claims a new user: the key is still judged as one client.
  bool capped = false;
  for (int i = 0; i < 20 && !capped; ++i) {
    auto r = post(gateway.port(), "/v1/chat/completions", chat("tandem", "Once", 4),
                  as("mallory", "cloud", "user-" + std::to_string(i)));
    ASSERT_EQ(r.status, 200) << r.body;
    capped = r.json_body()["tandem"]["tier"] == "edge";
  }
  EXPECT_TRUE(capped) << "renaming its users let mallory escape the cap";
}

// Points this process's stderr (where log lines go) at a file until destroyed.
class StderrCapture {
 public:
  explicit StderrCapture(std::string path) : path_(std::move(path)) {
    std::fflush(stderr);
    saved_ = ::dup(STDERR_FILENO);
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
  }
  ~StderrCapture() { restore(); }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  std::string text() const {
    std::ifstream in(path_);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }
  void restore() {
    if (saved_ >= 0) {
      std::fflush(stderr);
      ::dup2(saved_, STDERR_FILENO);
      ::close(saved_);
      saved_ = -1;
    }
  }

 private:
  std::string path_;
  int saved_ = -1;
};

TEST(SecurityGatewayTest, LogsCarryNeitherPromptsNorKeysUnlessAskedTo) {
  const std::string secret_prompt = "zebra-4471 is the launch code";
  const std::string path = ::testing::TempDir() + "security-log-" + std::to_string(::getpid());
  for (const bool log_prompts : {false, true}) {
    std::string log;
    {
      StderrCapture capture(path);
      {
        GatewayUnderTest gateway(
            keys_yaml() + "operations: {log_prompts: " + (log_prompts ? "true" : "false") + "}\n");
        EXPECT_EQ(
            post(gateway.port(), "/v1/chat/completions", chat("tandem", secret_prompt, 4), kClient)
                .status,
            200);
        EXPECT_EQ(post(gateway.port(), "/v1/chat/completions", chat("tandem", secret_prompt, 4),
                       kWrongKey)
                      .status,
                  401);
        EXPECT_TRUE(
            eventually([&] { return capture.text().find("\"decision\"") != std::string::npos; }));
      }  // stopped: every line it will ever write about these requests is in the file now
      log = capture.text();
    }
    EXPECT_NE(log.find("\"decision\""), std::string::npos) << "nothing was logged";
    EXPECT_EQ(log.find("client-key"), std::string::npos) << log;
    EXPECT_EQ(log.find("sk-wrong"), std::string::npos) << log;
    EXPECT_EQ(log.find(config::sha256_hex("client-key")), std::string::npos) << log;
    if (log_prompts) {
      EXPECT_NE(log.find("zebra-4471"), std::string::npos) << "operations.log_prompts: " << log;
    } else {
      EXPECT_EQ(log.find("zebra-4471"), std::string::npos) << log;
    }
  }
  std::remove(path.c_str());
}

TEST(SecurityGatewayTest, StaticFilesCannotLeaveTheirFolder) {
  GatewayUnderTest gateway("");
  for (const char* target :
       {"/dashboard/../../etc/passwd", "/dashboard/..%2f..%2fetc%2fpasswd",
        "/dashboard/%2e%2e/%2e%2e/etc/passwd", "//etc/passwd", "/dashboard//etc/passwd",
        "/dashboard/dashboard.js/../../../proc/self/environ", "/../CMakeLists.txt",
        "/dashboard/..\\..\\etc\\passwd", "/dashboard/index.html%00.js"}) {
    const auto r = request(gateway.port(), "GET", target);
    EXPECT_EQ(r.status, 404) << target;
    EXPECT_EQ(r.body.find("root:"), std::string::npos) << target;
  }
}

}  // namespace
}  // namespace tandem::test
