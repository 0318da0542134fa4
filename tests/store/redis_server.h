#pragma once
// A real redis-server for one test (or one test binary): Debian's /usr/bin/redis-server,
// started as a child process on a free loopback port, with no persistence, its data and log
// in a fresh temporary directory, and stopped (SIGTERM, then SIGKILL) when the fixture goes.
//
// A missing redis-server is a failure, not a skip: ok() is false and problem() says to run
// scripts/install-deps.sh, so a broken setup never passes as green.
//
// Thread-safety: none; drive a RedisServer from the thread that made it. (The child is tied
// to that thread with PR_SET_PDEATHSIG, so it dies with it even if the test binary crashes.)

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/redis_client.h"
#include "temp_dir.h"

namespace tandem::store::testing {

inline constexpr const char* kRedisServerPath = "/usr/bin/redis-server";

struct RedisServerOptions {
  std::string requirepass;   // "" for none
  bool unix_socket = false;  // also listen on <dir>/redis.sock
};

class RedisServer {
 public:
  explicit RedisServer(RedisServerOptions options = {}) : options_(std::move(options)) {
    if (!dir_.ok()) {
      problem_ = "cannot create a temporary directory for redis-server";
      return;
    }
    if (::access(kRedisServerPath, X_OK) != 0) {
      problem_ = std::string(kRedisServerPath) +
                 " is missing: run scripts/install-deps.sh (it installs Debian's redis-server, "
                 "as CI does)";
      return;
    }
    // Another process may take the port between our probe and redis-server's bind: try again
    // with a fresh port a couple of times.
    for (int attempt = 0; attempt < 3 && !running(); ++attempt) {
      port_ = free_port();
      if (port_ == 0) {
        problem_ = "cannot find a free loopback port";
        return;
      }
      start();
    }
  }

  ~RedisServer() { stop(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  // Whether the server answers; problem() says why not.
  bool ok() const { return running() && problem_.empty(); }
  const std::string& problem() const { return problem_; }

  uint16_t port() const { return port_; }
  // redis://127.0.0.1:<port>, without the password.
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  // unix://<dir>/redis.sock (with RedisServerOptions::unix_socket).
  std::string unix_url() const { return "unix://" + socket_path(); }
  // Client options for this server: its URL, its password, short timeouts, `prefix`.
  RedisOptions client_options(const std::string& prefix = "tandem:test:") const {
    RedisOptions options;
    options.url = url();
    options.password = options_.requirepass;
    options.connect_timeout_ms = 1000;
    options.command_timeout_ms = 1000;
    options.prefix = prefix;
    return options;
  }
  // What redis-server wrote so far.
  std::string log() const {
    std::ifstream in(dir_.file("redis.log"));
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  // Stops the server (its data is gone: nothing is persisted) and starts it again on the same
  // port, as a crash and restart would. False (and problem()) when it does not come back.
  bool restart() {
    stop();
    problem_.clear();
    start();
    return ok();
  }

  // SIGTERM, then SIGKILL after 5 s; waits for the child.
  void stop() {
    if (pid_ <= 0) {
      return;
    }
    ::kill(pid_, SIGCONT);  // a paused server cannot handle SIGTERM
    ::kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (::waitpid(pid_, nullptr, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    pid_ = -1;
  }

  // Freezes the server (SIGSTOP): connections stay open but nothing answers, as with a hung
  // host. resume() thaws it.
  void pause() {
    if (pid_ > 0) {
      ::kill(pid_, SIGSTOP);
    }
  }
  void resume() {
    if (pid_ > 0) {
      ::kill(pid_, SIGCONT);
    }
  }

 private:
  static uint16_t free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      return 0;
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t length = sizeof(address);
    uint16_t port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
      port = ntohs(address.sin_port);
    }
    ::close(fd);
    return port;
  }

  std::string socket_path() const { return dir_.file("redis.sock"); }
  bool running() const { return pid_ > 0; }

  void start() {
    std::vector<std::string> args = {kRedisServerPath};
    if (!options_.requirepass.empty()) {
      // From a file rather than the command line, so that the password is not in `ps`.
      const std::string conf = dir_.file("redis.conf");
      std::ofstream out(conf);
      out << "requirepass \"" << options_.requirepass << "\"\n";
      out.close();
      ::chmod(conf.c_str(), 0600);
      args.push_back(conf);
    }
    for (const char* arg : {"--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                            "--daemonize", "no", "--protected-mode", "yes"}) {
      args.emplace_back(arg);
    }
    args.insert(args.end(), {"--port", std::to_string(port_), "--dir", dir_.path()});
    if (options_.unix_socket) {
      args.insert(args.end(), {"--unixsocket", socket_path(), "--unixsocketperm", "700"});
    }
    std::vector<char*> argv;
    for (std::string& arg : args) {
      argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    const std::string log_path = dir_.file("redis.log");
    const pid_t parent = ::getpid();

    // Between fork and exec the child may only make async-signal-safe calls: everything it
    // needs is prepared above.
    const pid_t pid = ::fork();
    if (pid < 0) {
      problem_ = "cannot fork redis-server: " + std::string(std::strerror(errno));
      return;
    }
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) {
        ::_exit(126);
      }
      const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      const int null_fd = ::open("/dev/null", O_RDONLY);
      if (log_fd < 0 || null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(log_fd, 1) < 0 ||
          ::dup2(log_fd, 2) < 0) {
        ::_exit(126);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    pid_ = pid;
    wait_until_ready();
  }

  // PING until the server answers (+PONG, or -NOAUTH when it wants a password), it exits, or
  // 10 s pass.
  void wait_until_ready() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        problem_ = "redis-server exited (status " + std::to_string(status) +
                   ") before answering; its log:\n" + log();
        return;
      }
      if (pings()) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    problem_ = "redis-server did not answer PING within 10 s; its log:\n" + log();
    stop();
  }

  bool pings() const {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      return false;
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port_);
    bool answered = false;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
        ::send(fd, "PING\r\n", 6, MSG_NOSIGNAL) == 6) {
      pollfd poll_fd{fd, POLLIN, 0};
      char reply[64] = {};
      if (::poll(&poll_fd, 1, 500) == 1 && ::recv(fd, reply, sizeof(reply) - 1, 0) > 0) {
        const std::string text(reply);
        answered = text.rfind("+PONG", 0) == 0 || text.rfind("-NOAUTH", 0) == 0;
      }
    }
    ::close(fd);
    return answered;
  }

  RedisServerOptions options_;
  TempDir dir_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
  std::string problem_;
};

// The tests that run against both backends of a store class take this parameter; their names
// end in /sqlite and /redis.
enum class StoreBackend { kSqlite, kRedis };

inline std::string backend_name(const ::testing::TestParamInfo<StoreBackend>& info) {
  return info.param == StoreBackend::kSqlite ? "sqlite" : "redis";
}

// How gtest (and ctest's test list) shows the parameter, instead of its bytes.
inline void PrintTo(StoreBackend backend, std::ostream* out) {
  *out << (backend == StoreBackend::kSqlite ? "sqlite" : "redis");
}

// One server for the whole test binary, started on first use and stopped at exit: the
// parameterised store tests share it, each under a prefix of its own (unique_prefix()).
inline RedisServer& shared_redis_server() {
  static RedisServer server;
  return server;
}

// A key prefix that no other test of this process uses: "test<pid>.<n>:".
inline std::string unique_prefix() {
  static int next = 0;
  return "test" + std::to_string(::getpid()) + "." + std::to_string(++next) + ":";
}

// A client of `server` under `prefix`; the error when it cannot connect.
inline Result<std::shared_ptr<RedisClient>> connect_client(const RedisServer& server,
                                                           const std::string& prefix) {
  auto client = RedisClient::connect(server.client_options(prefix));
  if (!client) {
    return client.error();
  }
  return std::shared_ptr<RedisClient>(std::move(client).value());
}

}  // namespace tandem::store::testing
