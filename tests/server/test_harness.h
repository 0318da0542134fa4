#pragma once
// Helpers for gateway tests: child processes (llama-server, the fault upstream), a blocking
// HTTP client, and an in-process gateway on a free port.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../support/eventually.h"
#include "net/asio.h"
#include "server/edge_options.h"
#include "server/http_server.h"
#include "store/trace_log.h"

namespace tandem::test {

namespace asio = net::asio;
namespace http = net::http;
using nlohmann::json;

// A child process, killed (SIGTERM, then SIGKILL) when this goes away. Given a `stderr_path`
// (for our own programs), its stderr goes there and it must stop cleanly on SIGTERM: any other
// end fails the test with that stderr. Under scripts/sanitize.sh this is how a sanitizer's
// report in the child (it exits non-zero at once, or at exit for leaks) reaches the test.
class ChildProcess {
 public:
  explicit ChildProcess(std::vector<std::string> args, std::string stderr_path = "")
      : program_(args.at(0)), stderr_path_(std::move(stderr_path)) {
    std::vector<char*> argv;
    for (auto& arg : args) {
      argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {
      // The child dies with the test process, even when a crash skips the destructor.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) {
        ::_exit(127);
      }
      const int null_fd = ::open("/dev/null", O_WRONLY);
      const int err_fd = stderr_path_.empty()
                             ? null_fd
                             : ::open(stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(null_fd, 1);
      ::dup2(err_fd, 2);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~ChildProcess() {
    if (pid_ <= 0) {
      return;
    }
    ::kill(pid_, SIGTERM);
    int status = 0;
    if (exited_within(pid_, stop_grace(), status)) {
      check_end(status);
      return;
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    if (!stderr_path_.empty()) {
      ADD_FAILURE() << program_ << " did not stop within " << stop_grace().count()
                    << " s of SIGTERM; its stderr:\n"
                    << stderr_text();
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  bool started() const { return pid_ > 0; }

 private:
  // How long the child may take to stop after SIGTERM. Our own programs must stop cleanly, and
  // under a sanitizer on a loaded machine their exit (a leak check included) can take seconds:
  // 30 s, reached only by a child that hangs. Others are only cleaned up.
  std::chrono::seconds stop_grace() const {
    return std::chrono::seconds(stderr_path_.empty() ? 2 : 30);
  }

  std::string stderr_text() const {
    std::ifstream in(stderr_path_);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  // Exit 0, or SIGTERM itself when it came before the child installed its handler.
  void check_end(int status) const {
    const bool clean = (WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
                       (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    if (stderr_path_.empty() || clean) {
      return;
    }
    const std::string how = WIFEXITED(status)
                                ? "exited with " + std::to_string(WEXITSTATUS(status))
                                : "was killed by signal " + std::to_string(WTERMSIG(status));
    ADD_FAILURE() << program_ << " " << how << "; its stderr:\n" << stderr_text();
  }

  std::string program_;
  std::string stderr_path_;
  pid_t pid_ = -1;
};

struct HttpResult {
  int status = 0;
  std::map<std::string, std::string> headers;
  std::string body;
  json json_body() const { return json::parse(body, nullptr, false); }
  // The data payloads of an SSE body.
  std::vector<std::string> events() const {
    std::vector<std::string> out;
    size_t at = 0;
    while ((at = body.find("data: ", at)) != std::string::npos) {
      const auto end = body.find("\n\n", at);
      out.push_back(body.substr(at + 6, end - at - 6));
      at = end;
    }
    return out;
  }
};

// One blocking HTTP/1.1 request on a fresh connection; status 0 when the connection failed.
inline HttpResult request(uint16_t port, const std::string& method, const std::string& target,
                          const std::string& body = "",
                          const std::map<std::string, std::string>& headers = {}) {
  HttpResult result;
  asio::io_context ioc;
  net::beast::tcp_stream stream(ioc);
  boost::system::error_code ec;
  stream.expires_after(std::chrono::seconds(60));
  stream.connect(net::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
  if (ec) {
    return result;
  }
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::content_type, "application/json");
  for (const auto& [name, value] : headers) {
    req.set(name, value);
  }
  req.body() = body;
  req.prepare_payload();
  http::write(stream, req, ec);
  net::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  http::read(stream, buffer, parser, ec);
  if (ec && !parser.is_header_done()) {
    return result;
  }
  const auto& res = parser.get();
  result.status = res.result_int();
  for (const auto& field : res) {
    result.headers[std::string(field.name_string())] = std::string(field.value());
  }
  result.body = res.body();
  return result;
}

inline HttpResult post(uint16_t port, const std::string& target, const json& body,
                       const std::map<std::string, std::string>& headers = {}) {
  return request(port, "POST", target, body.dump(), headers);
}

// A chat completions request as the bytes a client writes, for tests that hold the socket
// themselves (to stop reading, or to leave mid-answer).
inline std::string raw_chat_request(const json& body,
                                    const std::map<std::string, std::string>& headers = {}) {
  std::string text =
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n";
  for (const auto& [name, value] : headers) {
    text += name + ": " + value + "\r\n";
  }
  const std::string payload = body.dump();
  return text + "Content-Length: " + std::to_string(payload.size()) + "\r\n\r\n" + payload;
}

inline uint16_t free_port() {
  asio::io_context ioc;
  net::tcp::acceptor acceptor(ioc, net::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  return acceptor.local_endpoint().port();
}

// The fault-injecting upstream (tests/support/fault_upstream) on a free port.
class FaultUpstream {
 public:
  FaultUpstream() {
    const auto dir =
        std::filesystem::temp_directory_path() /
        ("tandem-fault-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    // A port file left by an earlier process with the same pid would point at a dead port.
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    dir_ = dir.string();
    port_file_ = (dir / "port").string();
    process_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{TANDEM_FAULT_UPSTREAM, "--port", "0", "--port-file", port_file_},
        (dir / "stderr").string());
    eventually([&] {
      std::ifstream in(port_file_);
      int port = 0;
      if (in >> port) {
        port_ = static_cast<uint16_t>(port);
      }
      return port_ != 0;
    });
  }
  ~FaultUpstream() {
    process_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  FaultUpstream(const FaultUpstream&) = delete;
  FaultUpstream& operator=(const FaultUpstream&) = delete;

  uint16_t port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  json stats() const { return request(port_, "GET", "/control/stats").json_body(); }
  int requests_for(const std::string& model) const {
    const json s = stats();
    return s.contains("requests") && s["requests"].contains(model) ? s["requests"][model].get<int>()
                                                                   : 0;
  }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::string dir_;
  std::string port_file_;
  uint16_t port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

// llama.cpp's own server on the shipped model: a real OpenAI-compatible cloud tier.
class LlamaServer {
 public:
  // `model` and `extra` arguments: another GGUF (a derived test model), e.g. with --jinja.
  explicit LlamaServer(const std::string& model = TANDEM_TEST_MODEL,
                       const std::vector<std::string>& extra = {})
      : port_(free_port()) {
    std::vector<std::string> argv{TANDEM_LLAMA_SERVER,
                                  "-m",
                                  model,
                                  "--host",
                                  "127.0.0.1",
                                  "--port",
                                  std::to_string(port_),
                                  "-c",
                                  "2048",
                                  "-np",
                                  "2",
                                  "-t",
                                  "1"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_ = std::make_unique<ChildProcess>(argv);
    ready_ = eventually([&] { return request(port_, "GET", "/health").status == 200; },
                        std::chrono::seconds(60));
  }
  bool ready() const { return ready_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  uint16_t port() const { return port_; }

 private:
  uint16_t port_;
  bool ready_ = false;
  std::unique_ptr<ChildProcess> process_;
};

// A gateway (edge engine + upstreams + HTTP server) running in this process.
class GatewayUnderTest {
 public:
  explicit GatewayUnderTest(const std::string& yaml, bool with_edge = true) {
    auto config = config::parse_config(yaml, "test.yaml");
    if (!config) {
      ADD_FAILURE() << config.error().message;
      return;
    }
    config->server.port = 0;
    std::unique_ptr<engine::Engine> edge;
    std::string problem = "not loaded in this test";
    if (with_edge) {
      if (config->edge.model.empty()) {
        config->edge.model = TANDEM_TEST_MODEL;
      }
      auto options = server::edge_engine_options(config->edge);
      auto opened = options ? engine::Engine::open(options.value())
                            : Result<std::unique_ptr<engine::Engine>>(options.error());
      if (opened) {
        edge = std::move(opened).value();
      } else {
        problem = opened.error().message;
      }
    }
    auto made = server::Gateway::create(std::move(config).value(), std::move(edge), problem);
    if (!made) {
      ADD_FAILURE() << made.error().message;
      return;
    }
    gateway_ = std::move(made).value();
    server_ = server::HttpServer::create(gateway_).value();
    thread_ = std::thread([this] { server_->run(); });
  }
  ~GatewayUnderTest() {
    if (server_) {
      server_->shutdown();
      thread_.join();
    }
  }
  uint16_t port() const { return server_->port(); }
  server::HttpServer& server() { return *server_; }
  server::Gateway& gateway() { return *gateway_; }
  std::thread& thread() { return thread_; }
  json health() const { return request(port(), "GET", "/health").json_body(); }

 private:
  std::shared_ptr<server::Gateway> gateway_;
  std::unique_ptr<server::HttpServer> server_;
  std::thread thread_;
};

// A fresh routing database under the temp directory, removed with the test.
class TraceDir {
 public:
  explicit TraceDir(const std::string& name)
      : dir_(std::filesystem::temp_directory_path() /
             ("tandem-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~TraceDir() { std::filesystem::remove_all(dir_); }
  std::string db() const { return (dir_ / "tandem.db").string(); }
  // Every byte SQLite keeps for the database: the file, its WAL and shared memory.
  std::string bytes() const {
    std::string all;
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::ifstream in(db() + suffix, std::ios::binary);
      all.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    return all;
  }
  std::vector<store::TraceRecord> traces() const {
    auto database = store::open_trace_database(db());
    EXPECT_TRUE(database) << database.error().message;
    if (!database) {
      return {};
    }
    auto rows = store::TraceLog(*database).read({});
    EXPECT_TRUE(rows) << rows.error().message;
    return rows ? *rows : std::vector<store::TraceRecord>{};
  }

 private:
  std::filesystem::path dir_;
};

inline json chat(const std::string& model, const std::string& content, int max_tokens = 16,
                 bool stream = false) {
  return {{"model", model},
          {"messages", json::array({{{"role", "user"}, {"content", content}}})},
          {"max_tokens", max_tokens},
          {"temperature", 0},
          {"stream", stream}};
}

// A greedy `/v1/completions` request for the routed model `tandem`.
inline json completion(const std::string& prompt, int max_tokens, bool stream = false) {
  return {{"model", "tandem"},
          {"prompt", prompt},
          {"max_tokens", max_tokens},
          {"temperature", 0},
          {"stream", stream}};
}

}  // namespace tandem::test
