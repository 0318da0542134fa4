// Redis as the shared store of several gateway replicas: URL and option checks, the client
// (AUTH, binary safety, errors, reconnecting, timeouts), the shared circuits and counters on
// both backends, and what replicas sharing (or not sharing) a prefix see. Every test starts
// its own redis-server on loopback (redis_server.h) or shares the binary's one under a prefix
// of its own.

#include <atomic>
#include <chrono>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "../support/eventually.h"
#include "redis_server.h"
#include "store/redis_client.h"
#include "store/redis_consistency_memory.h"
#include "store/redis_review_queue.h"
#include "store/shared_state.h"

namespace tandem::store {
namespace {

using testing::connect_client;
using testing::RedisServer;
using testing::RedisServerOptions;
using testing::shared_redis_server;
using testing::unique_prefix;
using Clock = std::chrono::steady_clock;

int64_t elapsed_ms(Clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count();
}

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ---- URLs and options ----

TEST(RedisUrl, ParsesValidUrls) {
  struct Case {
    std::string url, host;
    uint16_t port;
    std::string unix_path, username, password;
    int db;
  };
  const Case cases[] = {
      {"redis://127.0.0.1:6380", "127.0.0.1", 6380, "", "", "", 0},
      {"redis://cache.internal", "cache.internal", 6379, "", "", "", 0},
      {"redis://:s3cret@cache:7000/2", "cache", 7000, "", "", "s3cret", 2},
      {"redis://app:p%40ss%3Aw%2f@cache:7000/", "cache", 7000, "", "app", "p@ss:w/", 0},
      {"redis://[::1]:6390/1", "::1", 6390, "", "", "", 1},
      {"redis://[::1]", "::1", 6379, "", "", "", 0},
      {"unix:///run/redis/redis.sock", "", 6379, "/run/redis/redis.sock", "", "", 0},
      {"unix:///tmp/r.sock?db=3", "", 6379, "/tmp/r.sock", "", "", 3},
  };
  for (const Case& c : cases) {
    auto endpoint = parse_redis_url(c.url);
    ASSERT_TRUE(endpoint) << c.url << ": " << endpoint.error().message;
    EXPECT_EQ(endpoint->host, c.host) << c.url;
    EXPECT_EQ(endpoint->port, c.port) << c.url;
    EXPECT_EQ(endpoint->unix_path, c.unix_path) << c.url;
    EXPECT_EQ(endpoint->username, c.username) << c.url;
    EXPECT_EQ(endpoint->password, c.password) << c.url;
    EXPECT_EQ(endpoint->db, c.db) << c.url;
  }
}

TEST(RedisUrl, RefusesBadUrlsNamingTheProblem) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "empty"},
      {"http://host:6379", "unknown scheme"},
      {"rediss://host", "TLS"},
      {"redis://", "no host"},
      {"redis://:6379", "no host"},
      {"redis://host:", "empty port"},
      {"redis://host:0", "bad port"},
      {"redis://host:65536", "bad port"},
      {"redis://host:12ab", "bad port"},
      {"redis://host:123456789012", "bad port"},
      {"redis://host:6379/x", "database"},
      {"redis://host:6379/99999999", "database"},
      {"redis://host/1?timeout=3", "query"},
      {"redis://host?db=1", "query"},
      {"redis://[::1:6379", "closing ']'"},
      {"redis://[::1]x", "':port'"},
      {"redis://user@host", "without a password"},
      {"redis://:pw%zz@host", "%-escape"},
      {"redis://:pw%4@host", "%-escape"},
      {"unix://relative.sock", "absolute"},
      {"unix:///tmp/r.sock?x=1", "unknown parameter"},
      {"unix:///tmp/r.sock?db=", "database"},
      {"redis://host :6379", "space"},
      {"redis://host\n:6379", "control"},
      {std::string(5000, 'r'), "bytes"},
  };
  for (const auto& [url, problem] : cases) {
    auto endpoint = parse_redis_url(url);
    ASSERT_FALSE(endpoint) << url;
    EXPECT_EQ(endpoint.error().code, ErrorCode::kInvalidArgument) << url;
    EXPECT_NE(endpoint.error().message.find(problem), std::string::npos)
        << url << " -> " << endpoint.error().message;
    EXPECT_LT(endpoint.error().message.size(), 500u) << "a long URL is not echoed whole";
  }
}

TEST(RedisUrl, ErrorsNeverContainThePassword) {
  const std::string urls[] = {
      "redis://:hunter2@host:bad",  "redis://:hunter2@host/x", "redis://u:hunter2@:1",
      "redis://:hunter2",           "redis://hunter2@host",    "redis://:hunter2@host:6379?x=1",
      "redis://:hunter2@[::1:6379", "http://:hunter2@host",    "redis://:hunter2%zz@host:6379",
      "redis://u:hunter2@host:0",
  };
  for (const std::string& url : urls) {
    auto endpoint = parse_redis_url(url);
    ASSERT_FALSE(endpoint) << url;
    EXPECT_EQ(endpoint.error().message.find("hunter2"), std::string::npos)
        << endpoint.error().message;
  }
}

TEST(RedisOptionsCheck, RefusesBadTimeoutsAndPrefixes) {
  RedisOptions good;
  good.url = "redis://:from-url@127.0.0.1:6379";
  auto endpoint = check_redis_options(good);
  ASSERT_TRUE(endpoint) << endpoint.error().message;
  EXPECT_EQ(endpoint->password, "from-url");
  good.password = "from-env";  // the caller's password wins over the URL's
  EXPECT_EQ(check_redis_options(good)->password, "from-env");

  auto refused = [&](auto change, const std::string& problem) {
    RedisOptions options = good;
    change(options);
    auto checked = check_redis_options(options);
    ASSERT_FALSE(checked) << problem;
    EXPECT_EQ(checked.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(checked.error().message.find(problem), std::string::npos) << checked.error().message;
    EXPECT_EQ(checked.error().message.find("from-env"), std::string::npos);
  };
  refused([](RedisOptions& o) { o.connect_timeout_ms = 0; }, "connect_timeout_ms");
  refused([](RedisOptions& o) { o.command_timeout_ms = 600'001; }, "command_timeout_ms");
  refused([](RedisOptions& o) { o.prefix = ""; }, "prefix");
  refused([](RedisOptions& o) { o.prefix = "my app:"; }, "prefix");
  refused([](RedisOptions& o) { o.prefix = std::string(129, 'p'); }, "prefix");
  refused([](RedisOptions& o) { o.url = "redis://host:x"; }, "port");
}

// ---- the client ----

TEST(RedisClientTest, RoundTripsBinaryValues) {
  ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
  auto client = connect_client(shared_redis_server(), unique_prefix());
  ASSERT_TRUE(client) << client.error().message;
  std::string value = std::string("nul\0byte", 8) + "\r\n*3\r\n$-1\r\n" + "\xff\xfe\x80" + "日本語";
  const std::string key = (*client)->key(std::string("bin\0key\r\n", 9));
  auto set = (*client)->command({"SET", key, value});
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_TRUE(set->is_status());
  EXPECT_EQ(set->text, "OK");
  auto got = (*client)->command({"GET", key});
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->is_string());
  EXPECT_EQ(got->text, value);

  const std::string big(1u << 20, '\0');
  ASSERT_TRUE((*client)->command({"SET", key, big}));
  EXPECT_EQ((*client)->command({"GET", key})->text, big);
}

TEST(RedisClientTest, RepliesBecomeValues) {
  ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
  auto client = connect_client(shared_redis_server(), unique_prefix());
  ASSERT_TRUE(client) << client.error().message;
  RedisClient& redis = **client;
  auto missing = redis.command({"GET", redis.key("missing")});
  ASSERT_TRUE(missing);
  EXPECT_TRUE(missing->is_nil());
  auto counted = redis.command({"INCRBY", redis.key("n"), "-7"});
  ASSERT_TRUE(counted);
  ASSERT_TRUE(counted->is_integer());
  EXPECT_EQ(counted->integer, -7);
  ASSERT_TRUE(redis.command({"RPUSH", redis.key("list"), "a", "", "c"}));
  auto list = redis.command({"LRANGE", redis.key("list"), "0", "-1"});
  ASSERT_TRUE(list);
  ASSERT_TRUE(list->is_array());
  ASSERT_EQ(list->elements.size(), 3u);
  EXPECT_EQ(list->elements[1].text, "");
  EXPECT_TRUE(list->elements[1].is_string());
  auto pong = redis.command({"ping"});
  ASSERT_TRUE(pong);
  EXPECT_EQ(pong->text, "PONG");
}

TEST(RedisClientTest, ErrorRepliesNameTheCommandNotItsArguments) {
  ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
  auto client = connect_client(shared_redis_server(), unique_prefix());
  ASSERT_TRUE(client) << client.error().message;
  RedisClient& redis = **client;

  auto unknown = redis.command({"nosuchcmd", "the-users-secret-prompt"});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ErrorCode::kInternal);
  EXPECT_NE(unknown.error().message.find("redis NOSUCHCMD failed: ERR unknown command"),
            std::string::npos)
      << unknown.error().message;
  EXPECT_EQ(unknown.error().message.find("secret"), std::string::npos) << unknown.error().message;

  ASSERT_TRUE(redis.command({"SET", redis.key("text"), "private words"}));
  auto incr = redis.command({"INCR", redis.key("text")});
  ASSERT_FALSE(incr);
  EXPECT_EQ(incr.error().message.rfind("redis INCR failed: ERR value is not an integer", 0), 0u)
      << incr.error().message;
  EXPECT_EQ(incr.error().message.find("private"), std::string::npos);

  auto empty = redis.command({});
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, ErrorCode::kInvalidArgument);
  // The connection is still good after errors.
  EXPECT_TRUE(redis.command({"PING"}));
}

TEST(RedisClientTest, EvalLoadsScriptsAndReloadsThemAfterAFlush) {
  ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
  auto client = connect_client(shared_redis_server(), unique_prefix());
  ASSERT_TRUE(client) << client.error().message;
  RedisClient& redis = **client;
  const RedisScript concat{"test_concat", "return KEYS[1] .. '|' .. ARGV[1] .. '|' .. #ARGV"};
  const std::string binary_key("k\0ey", 4);
  auto first = redis.eval(concat, {binary_key}, {"v", "w"});
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->text, binary_key + "|v|2");
  ASSERT_TRUE(redis.command({"SCRIPT", "FLUSH"}));  // the server forgets every script
  auto again = redis.eval(concat, {"k"}, {"v"});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->text, "k|v|1");

  const RedisScript failing{"test_boom", "return redis.error_reply('ERR boom')"};
  auto boom = redis.eval(failing, {}, {"an argument that must not show"});
  ASSERT_FALSE(boom);
  EXPECT_NE(boom.error().message.find("script test_boom"), std::string::npos)
      << boom.error().message;
  EXPECT_NE(boom.error().message.find("ERR boom"), std::string::npos);
  EXPECT_EQ(boom.error().message.find("must not show"), std::string::npos);
}

TEST(RedisClientTest, Int64CompareInScriptsIsExact) {
  ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
  auto client = connect_client(shared_redis_server(), unique_prefix());
  ASSERT_TRUE(client) << client.error().message;
  const RedisScript compare{"test_cmp",
                            std::string(kLuaInt64Compare) + "return int64_cmp(ARGV[1], ARGV[2])"};
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  const std::pair<int64_t, int64_t> pairs[] = {
      {0, 0}, {1, 2}, {-1, 1}, {-12, -5}, {max - 1, max}, {min, min + 1}, {min, max}, {9, 10}};
  for (const auto& [a, b] : pairs) {
    const int expected = a < b ? -1 : (a > b ? 1 : 0);
    auto forward = (*client)->eval(compare, {}, {std::to_string(a), std::to_string(b)});
    auto backward = (*client)->eval(compare, {}, {std::to_string(b), std::to_string(a)});
    ASSERT_TRUE(forward && backward);
    EXPECT_EQ(forward->integer, expected) << a << " vs " << b;
    EXPECT_EQ(backward->integer, -expected) << b << " vs " << a;
  }
}

TEST(RedisClientTest, AuthenticatesWithThePasswordAndNeverShowsIt) {
  RedisServer server(RedisServerOptions{"correct horse battery"});
  ASSERT_TRUE(server.ok()) << server.problem();

  auto good = RedisClient::connect(server.client_options());
  ASSERT_TRUE(good) << good.error().message;
  EXPECT_TRUE((*good)->command({"PING"}));

  RedisOptions wrong = server.client_options();
  wrong.password = "staple wrong guess";
  auto refused = RedisClient::connect(wrong);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message.find("AUTH"), std::string::npos) << refused.error().message;
  EXPECT_EQ(refused.error().message.find("staple"), std::string::npos) << refused.error().message;
  EXPECT_EQ(refused.error().message.find("horse"), std::string::npos);

  RedisOptions none = server.client_options();
  none.password.clear();
  auto anonymous = RedisClient::connect(none);
  ASSERT_FALSE(anonymous);
  EXPECT_NE(anonymous.error().message.find("needs a password"), std::string::npos)
      << anonymous.error().message;

  // In the URL, %-escaped; the password option, when set, wins over it.
  RedisOptions in_url = server.client_options();
  in_url.password.clear();
  in_url.url = "redis://:correct%20horse%20battery@127.0.0.1:" + std::to_string(server.port());
  EXPECT_TRUE(RedisClient::connect(in_url));
  in_url.url = "redis://:nope@127.0.0.1:" + std::to_string(server.port());
  in_url.password = "correct horse battery";
  EXPECT_TRUE(RedisClient::connect(in_url));
}

TEST(RedisClientTest, SelectsTheDatabaseOfTheUrl) {
  ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
  const std::string prefix = unique_prefix();
  RedisOptions options = shared_redis_server().client_options(prefix);
  auto db0 = RedisClient::connect(options);
  options.url += "/1";
  auto db1 = RedisClient::connect(options);
  ASSERT_TRUE(db0 && db1);
  EXPECT_EQ((*db1)->address(), shared_redis_server().url() + "/1");
  ASSERT_TRUE((*db1)->command({"SET", (*db1)->key("where"), "one"}));
  EXPECT_TRUE((*db0)->command({"GET", (*db0)->key("where")})->is_nil());
  EXPECT_EQ((*db1)->command({"GET", (*db1)->key("where")})->text, "one");
}

TEST(RedisClientTest, ConnectsOverAUnixSocket) {
  RedisServer server(RedisServerOptions{"", true});
  ASSERT_TRUE(server.ok()) << server.problem();
  RedisOptions options = server.client_options();
  options.url = server.unix_url();
  auto client = RedisClient::connect(options);
  ASSERT_TRUE(client) << client.error().message;
  EXPECT_EQ((*client)->command({"PING"})->text, "PONG");
}

TEST(RedisClientTest, ReconnectsAfterTheServerRestarts) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.problem();
  auto client = RedisClient::connect(server.client_options());
  ASSERT_TRUE(client) << client.error().message;
  RedisClient& redis = **client;
  const RedisScript echo{"test_echo", "return ARGV[1]"};
  ASSERT_TRUE(redis.command({"SET", redis.key("before"), "1"}));
  ASSERT_TRUE(redis.eval(echo, {}, {"x"}));

  ASSERT_TRUE(server.restart()) << server.problem();
  // The old connection is dead; the client notices, reconnects and sends the command again.
  auto after = redis.command({"GET", redis.key("before")});
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_TRUE(after->is_nil());  // nothing is persisted across the restart
  // The restarted server has no scripts: NOSCRIPT, then SCRIPT LOAD, then the call.
  ASSERT_TRUE(server.restart()) << server.problem();
  auto echoed = redis.eval(echo, {}, {"y"});
  ASSERT_TRUE(echoed) << echoed.error().message;
  EXPECT_EQ(echoed->text, "y");
}

TEST(RedisClientTest, FailsFastWhenTheServerIsGone) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.problem();
  RedisOptions options = server.client_options();
  // Waiting for a timeout is the failure this test looks for: make it long (5 s), so that the
  // bound below (1 s) tolerates a 10x slower run of a refused connect (~1 ms) and still fails
  // a client that waits for either timeout instead of failing at once.
  options.command_timeout_ms = 5000;
  options.connect_timeout_ms = 5000;
  auto client = RedisClient::connect(options);
  ASSERT_TRUE(client) << client.error().message;
  server.stop();

  for (int i = 0; i < 3; ++i) {  // the dead connection (a refused reconnect), then refusals
    const auto start = Clock::now();
    auto reply = (*client)->command({"PING"});
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().code, ErrorCode::kBusy);
    EXPECT_NE(reply.error().message.find(server.url().substr(8)), std::string::npos)
        << reply.error().message;
    EXPECT_LT(elapsed_ms(start), 1000);
  }

  auto never = RedisClient::connect(options);  // nothing listens on the port now
  ASSERT_FALSE(never);
  EXPECT_EQ(never.error().code, ErrorCode::kBusy);
  EXPECT_NE(never.error().message.find("cannot connect to redis at"), std::string::npos);
}

TEST(RedisClientTest, AFrozenServerTimesOutOnceThenCallsFailAtOnce) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.problem();
  RedisOptions options = server.client_options();
  options.command_timeout_ms = 200;
  options.connect_timeout_ms = 200;
  auto client = RedisClient::connect(options);
  ASSERT_TRUE(client) << client.error().message;
  RedisClient& redis = **client;
  EXPECT_TRUE(redis.reachable());
  EXPECT_FALSE(redis.outage());

  server.pause();
  const auto start = Clock::now();
  auto timed_out = redis.command({"SET", redis.key("k"), "v"});
  const int64_t took = elapsed_ms(start);
  ASSERT_FALSE(timed_out);
  EXPECT_EQ(timed_out.error().code, ErrorCode::kBusy);
  EXPECT_GE(took, 150);
  // A hang is the failure; 10x the timeout leaves room for a slow, sanitised run's overhead.
  EXPECT_LT(took, 2000) << "a command must not wait much past command_timeout_ms";

  // The outage has begun: calls are refused without being sent (the message says so), commands
  // and scripts alike, and counted.
  EXPECT_FALSE(redis.reachable());
  ASSERT_TRUE(redis.outage());
  EXPECT_NE(redis.outage()->reason.find("no reply"), std::string::npos) << redis.outage()->reason;
  for (int i = 0; i < 3; ++i) {
    auto refused = redis.command({"GET", redis.key("k")});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::kBusy);
    EXPECT_NE(refused.error().message.find("not sent"), std::string::npos)
        << refused.error().message;
  }
  auto script = redis.eval({"test_echo", "return ARGV[1]"}, {}, {"x"});
  ASSERT_FALSE(script);
  EXPECT_NE(script.error().message.find("not sent"), std::string::npos);
  EXPECT_EQ(redis.refused_calls(), 4u);

  // A probe reaches for the server: still frozen, the outage goes on (and keeps its start).
  const int64_t since = redis.outage()->since_unix_ms;
  EXPECT_FALSE(redis.probe());
  ASSERT_TRUE(redis.outage());
  EXPECT_EQ(redis.outage()->since_unix_ms, since);

  server.resume();
  EXPECT_FALSE(redis.command({"PING"})) << "only a probe ends an outage";
  ASSERT_TRUE(redis.probe());
  EXPECT_TRUE(redis.reachable());
  EXPECT_FALSE(redis.outage());
  auto back = redis.command({"SET", redis.key("k"), "w"});
  EXPECT_TRUE(back) << back.error().message;
}

TEST(RedisClientTest, AnErrorReplyIsNoOutage) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.problem();
  auto client = RedisClient::connect(server.client_options());
  ASSERT_TRUE(client) << client.error().message;
  RedisClient& redis = **client;
  ASSERT_TRUE(redis.command({"SET", redis.key("text"), "abc"}));
  EXPECT_FALSE(redis.command({"INCR", redis.key("text")}));  // WRONGTYPE-style error reply
  EXPECT_FALSE(redis.eval({"test_bad", "return redis.call('NOSUCHCOMMAND')"}, {}, {}));
  EXPECT_TRUE(redis.reachable());
  EXPECT_TRUE(redis.command({"PING"}));
}

TEST(RedisClientTest, AServerThatWentAwayIsAnOutageUntilItIsBack) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.problem();
  auto client = RedisClient::connect(server.client_options());
  ASSERT_TRUE(client) << client.error().message;
  RedisClient& redis = **client;
  server.stop();
  EXPECT_FALSE(redis.command({"PING"}));
  EXPECT_FALSE(redis.reachable());
  EXPECT_FALSE(redis.probe()) << "nothing listens";
  ASSERT_TRUE(server.restart()) << server.problem();
  ASSERT_TRUE(redis.probe());
  EXPECT_TRUE(redis.command({"PING"}));
}

TEST(RedisClientTest, ThreadsShareOneClient) {
  ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
  auto client = connect_client(shared_redis_server(), unique_prefix());
  ASSERT_TRUE(client) << client.error().message;
  RedisClient& redis = **client;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        if (!redis.command({"INCR", redis.key("n")})) {
          ADD_FAILURE() << "INCR failed";
          return;
        }
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(redis.command({"GET", redis.key("n")})->text, "800");
}

// ---- shared state, on both backends ----

class SharedStateTest : public ::testing::TestWithParam<testing::StoreBackend> {
 protected:
  void SetUp() override {
    if (GetParam() == testing::StoreBackend::kSqlite) {
      state_ = std::make_unique<LocalSharedState>();
      return;
    }
    ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
    auto client = connect_client(shared_redis_server(), unique_prefix());
    ASSERT_TRUE(client) << client.error().message;
    state_ = std::make_unique<RedisSharedState>(*client);
  }

  std::vector<SharedCircuit> open(int64_t now_ms) {
    auto circuits = state_->open_circuits(now_ms);
    EXPECT_TRUE(circuits) << circuits.error().message;
    return circuits ? *circuits : std::vector<SharedCircuit>{};
  }

  std::unique_ptr<SharedState> state_;
};

// The "sqlite" parameter stands for the in-process default here: LocalSharedState.
std::string shared_state_name(const ::testing::TestParamInfo<testing::StoreBackend>& info) {
  return info.param == testing::StoreBackend::kSqlite ? "local" : "redis";
}

INSTANTIATE_TEST_SUITE_P(Backends, SharedStateTest,
                         ::testing::Values(testing::StoreBackend::kSqlite,
                                           testing::StoreBackend::kRedis),
                         shared_state_name);

TEST_P(SharedStateTest, CircuitIsOpenUntilItsUntilTime) {
  EXPECT_STREQ(state_->backend(), GetParam() == testing::StoreBackend::kSqlite ? "local" : "redis");
  EXPECT_TRUE(open(1000).empty());
  ASSERT_TRUE(state_->publish_open_circuit("openai", "replica-a", 5000, 1000));
  auto circuits = open(1000);
  ASSERT_EQ(circuits.size(), 1u);
  EXPECT_EQ(circuits[0].upstream, "openai");
  EXPECT_EQ(circuits[0].replica, "replica-a");
  EXPECT_EQ(circuits[0].until_ms, 5000);
  EXPECT_EQ(open(4999).size(), 1u);
  EXPECT_TRUE(open(5000).empty());  // closed at until_ms exactly
}

TEST_P(SharedStateTest, TheLaterUntilStands) {
  ASSERT_TRUE(state_->publish_open_circuit("openai", "replica-a", 5000, 1000));
  ASSERT_TRUE(state_->publish_open_circuit("openai", "replica-b", 3000, 1100));
  auto circuits = open(1200);
  ASSERT_EQ(circuits.size(), 1u);
  EXPECT_EQ(circuits[0].replica, "replica-a");
  EXPECT_EQ(circuits[0].until_ms, 5000);
  ASSERT_TRUE(state_->publish_open_circuit("openai", "replica-b", 7000, 1300));
  circuits = open(1400);
  ASSERT_EQ(circuits.size(), 1u);
  EXPECT_EQ(circuits[0].replica, "replica-b");
  EXPECT_EQ(circuits[0].until_ms, 7000);
  // A time already past publishes nothing.
  ASSERT_TRUE(state_->publish_open_circuit("anthropic", "replica-a", 1000, 1000));
  EXPECT_EQ(open(1400).size(), 1u);
}

TEST_P(SharedStateTest, ClearClosesTheCircuitForEveryone) {
  ASSERT_TRUE(state_->publish_open_circuit("openai", "a", 9000, 1000));
  ASSERT_TRUE(state_->publish_open_circuit("anthropic", "b", 9000, 1000));
  ASSERT_TRUE(state_->clear_circuit("openai"));
  ASSERT_TRUE(state_->clear_circuit("never-opened"));
  auto circuits = open(2000);
  ASSERT_EQ(circuits.size(), 1u);
  EXPECT_EQ(circuits[0].upstream, "anthropic");
  // Opening it again after a clear works.
  ASSERT_TRUE(state_->publish_open_circuit("openai", "c", 3000, 2000));
  circuits = open(2000);
  ASSERT_EQ(circuits.size(), 2u);
  EXPECT_EQ(circuits[0].upstream, "anthropic");  // sorted by upstream
  EXPECT_EQ(circuits[1].upstream, "openai");
  EXPECT_EQ(circuits[1].replica, "c");
}

TEST_P(SharedStateTest, HugeTimesDoNotOverflow) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  ASSERT_TRUE(state_->publish_open_circuit("forever", "a", max, -5));
  ASSERT_TRUE(state_->publish_open_circuit("old", "a", max, std::numeric_limits<int64_t>::min()));
  auto circuits = open(max - 1);
  ASSERT_EQ(circuits.size(), 2u);
  EXPECT_EQ(circuits[0].until_ms, max);
  EXPECT_TRUE(open(max).empty());
}

TEST_P(SharedStateTest, CountersAddUpAndRead) {
  auto counters = state_->counters();
  ASSERT_TRUE(counters) << counters.error().message;
  EXPECT_TRUE(counters->empty());
  for (int i = 0; i < 3; ++i) {
    auto value = state_->add("requests.edge", 1);
    ASSERT_TRUE(value) << value.error().message;
    EXPECT_EQ(*value, i + 1);
  }
  ASSERT_TRUE(state_->add("cost_micro_usd", 1500));
  auto less = state_->add("cost_micro_usd", -500);
  ASSERT_TRUE(less);
  EXPECT_EQ(*less, 1000);
  ASSERT_TRUE(state_->add("escalations", 0));
  counters = state_->counters();
  ASSERT_TRUE(counters);
  EXPECT_EQ(*counters, (std::map<std::string, int64_t>{
                           {"cost_micro_usd", 1000}, {"escalations", 0}, {"requests.edge", 3}}));
}

TEST_P(SharedStateTest, CounterOverflowIsRefusedAndKeepsTheValue) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  ASSERT_TRUE(state_->add("big", max));
  auto over = state_->add("big", 1);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(over.error().message.find("overflow"), std::string::npos);
  EXPECT_EQ(state_->counters()->at("big"), max);
  ASSERT_TRUE(state_->add("small", std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(state_->add("small", -1).error().code, ErrorCode::kInvalidArgument);
}

TEST_P(SharedStateTest, NamesAreChecked) {
  const std::string bad[] = {"", std::string(201, 'n'), "line\nbreak", "naïve", "tab\t"};
  for (const std::string& name : bad) {
    EXPECT_EQ(state_->add(name, 1).error().code, ErrorCode::kInvalidArgument) << name;
    EXPECT_EQ(state_->publish_open_circuit(name, "a", 9000, 1000).error().code,
              ErrorCode::kInvalidArgument);
    EXPECT_EQ(state_->clear_circuit(name).error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(state_->publish_open_circuit("openai", "bad\x01", 9000, 1000).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(state_->publish_open_circuit("openai", "", 9000, 1000));  // anonymous replica
  EXPECT_TRUE(state_->add(std::string(200, 'n'), 1));
  EXPECT_TRUE(state_->add("with space ~!", 1));
  EXPECT_EQ(state_->counters()->size(), 2u);
}

// ---- replicas on Redis ----

TEST(RedisSharedStateTest, TwoReplicasSeeEachOthersWrites) {
  ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
  const std::string prefix = unique_prefix();
  auto a_client = connect_client(shared_redis_server(), prefix);
  auto b_client = connect_client(shared_redis_server(), prefix);
  ASSERT_TRUE(a_client && b_client);
  RedisSharedState a(*a_client);
  RedisSharedState b(*b_client);
  ASSERT_TRUE(a.publish_open_circuit("openai", "replica-a", 9000, 1000));
  auto seen = b.open_circuits(2000);
  ASSERT_TRUE(seen);
  ASSERT_EQ(seen->size(), 1u);
  EXPECT_EQ((*seen)[0].replica, "replica-a");
  ASSERT_TRUE(b.clear_circuit("openai"));
  EXPECT_TRUE(a.open_circuits(2000)->empty());

  ASSERT_TRUE(a.add("requests.cloud", 2));
  ASSERT_TRUE(b.add("requests.cloud", 3));
  EXPECT_EQ(a.counters()->at("requests.cloud"), 5);
}

TEST(RedisSharedStateTest, RedisDropsTheCircuitAtItsUntilTime) {
  ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
  auto client = connect_client(shared_redis_server(), unique_prefix());
  ASSERT_TRUE(client);
  RedisClient& redis = **client;
  RedisSharedState state(*client);
  const int64_t now = wall_ms();
  // Open for 1 s: the PTTL read right after the publish finds it alive even on a slow,
  // sanitised run (a few ms); Redis then drops it by itself, which is polled for below.
  constexpr int64_t kOpenMs = 1000;
  ASSERT_TRUE(state.publish_open_circuit("openai", "a", now + kOpenMs, now));
  auto ttl = redis.command({"PTTL", redis.key("circuit:openai")});
  ASSERT_TRUE(ttl);
  EXPECT_GT(ttl->integer, 0);
  EXPECT_LE(ttl->integer, kOpenMs);
  EXPECT_TRUE(test::eventually([&] {
    auto exists = redis.command({"EXISTS", redis.key("circuit:openai")});
    return exists && exists->integer == 0;
  })) << "Redis kept the circuit past its until time";
  EXPECT_TRUE(state.open_circuits(wall_ms())->empty());
  // Listing forgot the dropped circuit's name as well.
  EXPECT_EQ(redis.command({"SCARD", redis.key("circuits")})->integer, 0);

  ASSERT_TRUE(state.publish_open_circuit("forever", "a", std::numeric_limits<int64_t>::max(), now));
  EXPECT_EQ(redis.command({"PTTL", redis.key("circuit:forever")})->integer, -1);
}

NewTicket sample_ticket(const std::string& prompt) {
  NewTicket ticket;
  ticket.client = "acme";
  ticket.model = "tandem";
  ticket.request_json = R"({"model":"tandem"})";
  ticket.prompt_text = prompt;
  ticket.reason = "low confidence";
  return ticket;
}

TEST(RedisReviewQueueTest, TwoReplicasSeeTheSameTickets) {
  ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
  const std::string prefix = unique_prefix();
  auto a_client = connect_client(shared_redis_server(), prefix);
  auto b_client = connect_client(shared_redis_server(), prefix);
  ASSERT_TRUE(a_client && b_client);
  RedisReviewQueue a(*a_client);
  RedisReviewQueue b(*b_client);
  auto created = a.create(sample_ticket("from replica a"), 1000);
  ASSERT_TRUE(created) << created.error().message;
  auto listed = b.list("pending", 10);
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, created->id);
  ASSERT_TRUE(b.answer(created->id, "42", "bob", 2000));
  auto seen = a.get(created->id);
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->status, "answered");
  EXPECT_EQ(seen->answer, "42");
  auto late = a.answer(created->id, "43", "alice", 3000);
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().message,
            "ticket " + created->id + " was already answered by bob at 1970-01-01T00:00:02.000Z");
}

TEST(RedisReviewQueueTest, PrefixesKeepDeploymentsApart) {
  ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
  const std::string base = unique_prefix();
  auto a_client = connect_client(shared_redis_server(), base + "staging:");
  auto b_client = connect_client(shared_redis_server(), base + "prod:");
  ASSERT_TRUE(a_client && b_client);
  RedisReviewQueue staging(*a_client);
  RedisReviewQueue prod(*b_client);
  auto ticket = staging.create(sample_ticket("staging only"), 1000);
  ASSERT_TRUE(ticket);
  EXPECT_EQ(prod.count("").value(), 0u);
  EXPECT_TRUE(prod.list("", 10)->empty());
  EXPECT_EQ(prod.get(ticket->id).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(prod.answer(ticket->id, "x", "eve", 2000).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(staging.count("pending").value(), 1u);

  // Every key the queue wrote lies under its prefix.
  auto keys = (*a_client)->command({"KEYS", base + "*"});
  ASSERT_TRUE(keys);
  ASSERT_FALSE(keys->elements.empty());
  for (const RedisReply& key : keys->elements) {
    EXPECT_EQ(key.text.rfind(base + "staging:rq:", 0), 0u) << key.text;
  }
}

TEST(RedisReviewQueueTest, KeepsWorkingAcrossARedisRestart) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.problem();
  auto client = RedisClient::connect(server.client_options());
  ASSERT_TRUE(client) << client.error().message;
  RedisReviewQueue queue(std::move(client).value());
  ASSERT_TRUE(queue.create(sample_ticket("before"), 1000));
  ASSERT_TRUE(server.restart()) << server.problem();
  // A new connection, and the scripts loaded again; the data is gone (no persistence here).
  auto after = queue.create(sample_ticket("after"), 2000);
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_EQ(queue.count("").value(), 1u);
  EXPECT_TRUE(queue.answer(after->id, "ok", "alice", 3000));
}

TEST(RedisConsistencyMemoryTest, ReplicasShareRoutesAndHits) {
  ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
  const std::string prefix = unique_prefix();
  auto a_client = connect_client(shared_redis_server(), prefix);
  auto b_client = connect_client(shared_redis_server(), prefix);
  auto other_client = connect_client(shared_redis_server(), unique_prefix());
  ASSERT_TRUE(a_client && b_client && other_client);
  RedisConsistencyMemory a(*a_client);
  RedisConsistencyMemory b(*b_client);
  RedisConsistencyMemory other(*other_client);
  ASSERT_TRUE(a.remember("acme", {1, 2}, "cloud", "hard", 1000, 60'000));
  auto on_b = b.lookup("acme", {2}, 2000);
  ASSERT_TRUE(on_b && on_b->has_value());
  EXPECT_EQ((*on_b)->tier, "cloud");
  EXPECT_EQ((*on_b)->hits, 1);
  EXPECT_EQ(a.lookup("acme", {2}, 2001).value()->hits, 2);
  EXPECT_FALSE(other.lookup("acme", {2}, 2000)->has_value());  // another deployment
}

TEST(RedisConsistencyMemoryTest, RedisDropsRoutesAfterTheirExpiry) {
  ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
  auto client = connect_client(shared_redis_server(), unique_prefix());
  ASSERT_TRUE(client);
  RedisClient& redis = **client;
  RedisConsistencyMemory memory(*client);
  // Relative to the caller's clock (here a simulated one, far in the past for Redis).
  ASSERT_TRUE(memory.remember("acme", {7}, "edge", "r", 1000, 5000));
  auto keys = redis.command({"KEYS", redis.key("cm:r:*")});
  ASSERT_TRUE(keys);
  ASSERT_EQ(keys->elements.size(), 1u);
  EXPECT_EQ(keys->elements[0].text, redis.key("cm:r:61636d65:7"));  // hex("acme"):7
  const int64_t ttl = redis.command({"PTTL", keys->elements[0].text})->integer;
  EXPECT_GT(ttl, 5000);
  EXPECT_LE(ttl, 5000 + RedisConsistencyMemory::kReclaimGraceMs);
  const int64_t index_ttl = redis.command({"PTTL", redis.key("cm:c:61636d65")})->integer;
  EXPECT_GE(index_ttl, ttl - 100);

  ASSERT_TRUE(memory.remember("acme", {8}, "edge", "r", 1000, std::numeric_limits<int64_t>::max()));
  EXPECT_EQ(redis.command({"PTTL", redis.key("cm:r:61636d65:8")})->integer, -1);
  EXPECT_EQ(redis.command({"PTTL", redis.key("cm:c:61636d65")})->integer, -1);
}

TEST(RedisConsistencyMemoryTest, ForgetLeavesNothingBehind) {
  ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
  auto client = connect_client(shared_redis_server(), unique_prefix());
  ASSERT_TRUE(client);
  RedisClient& redis = **client;
  RedisConsistencyMemory memory(*client);
  std::vector<uint64_t> keys;
  for (uint64_t k = 0; k < kMaxClusterKeys; ++k) {
    keys.push_back(k * 0x9e3779b97f4a7c15ull);
  }
  const std::string odd("client:with\0odd bytes", 21);
  ASSERT_TRUE(memory.remember(odd, keys, "human", "r", 1000, 60'000));
  ASSERT_TRUE(memory.remember("bob", {1}, "edge", "r", 1000, 60'000));
  ASSERT_TRUE(memory.lookup(odd, {keys[31]}, 2000)->has_value());
  ASSERT_TRUE(memory.forget(odd));
  EXPECT_FALSE(memory.lookup(odd, {keys[31]}, 2000)->has_value());
  auto left = redis.command({"KEYS", redis.key("*")});
  ASSERT_TRUE(left);
  EXPECT_EQ(left->elements.size(), 2u);  // bob's route and index only
  EXPECT_TRUE(memory.lookup("bob", {1}, 2000)->has_value());
}

TEST(RedisConsistencyMemoryTest, PruneTouchesOnlyItsOwnPrefix) {
  ASSERT_TRUE(shared_redis_server().ok()) << shared_redis_server().problem();
  const std::string base = unique_prefix();
  // Unescaped, a*: would match abc:'s keys in SCAN's glob.
  auto a_client = connect_client(shared_redis_server(), base + "a*:");
  auto b_client = connect_client(shared_redis_server(), base + "abc:");
  ASSERT_TRUE(a_client && b_client);
  RedisConsistencyMemory a(*a_client);
  RedisConsistencyMemory b(*b_client);
  ASSERT_TRUE(a.remember("acme", {1, 2}, "edge", "r", 1000, 100));
  ASSERT_TRUE(b.remember("acme", {1, 2, 3}, "edge", "r", 1000, 100));
  auto pruned = a.prune_expired(5000);
  ASSERT_TRUE(pruned) << pruned.error().message;
  EXPECT_EQ(*pruned, 2u);
  EXPECT_EQ(b.prune_expired(5000).value(), 3u);
  EXPECT_EQ(a.prune_expired(5000).value(), 0u);
  // Pruning also emptied the clients' indexes.
  EXPECT_EQ((*a_client)->command({"EXISTS", (*a_client)->key("cm:c:61636d65")})->integer, 0);
}

}  // namespace
}  // namespace tandem::store
