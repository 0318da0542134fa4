// Measures the router's ingress decision, the work done for every request before any model
// runs (bench/run_routing_bench.sh turns the output into the tables of docs/BENCHMARKS.md):
//   decision = Router::signals(input)   privacy scan over every field of the request body, as
//                                       the gateway parsed it (+ review rules when
//                                       configured), prompt features, complexity classifier
//            + Router::decide(signals, health)   the policy, a pure function
// on prompts of 100, 2,000 and 20,000 characters (Unicode code points), each in four variants:
//   en        real English prose with digits and punctuation (bench/data/routing_prose_en.txt:
//             GSM8K, MMLU, TriviaQA and TruthfulQA prompts from the shared routing traces; like
//             most real prose it has a few curly quotes and dashes),
//   en-ascii  the same with those few characters made ASCII (the scanner's fast path),
//   en+card   `en` with a payment card number at the very end, so the scanner finds it after
//             reading everything and the policy takes the privacy path,
//   zh        Chinese prose (bench/data/routing_prose_zh.txt, written for this benchmark),
//   en-thread, zh-thread, ru-thread   the same prose as a conversation of four user messages
//             of a quarter of the size each: the features read the last message and the three
//             before it (thread_task.h; in Russian, which the task model does not read, its
//             stand-in also scans each earlier turn for cues),
//   en-app, zh-app   the same prose after a system prompt that states a task and goes on with
//             prose: the features read its first KiB with the user message (prompt_features.h),
//   ja ko ru ar hi vi th he bn el   Japanese, Korean, Russian, Arabic, Hindi, Vietnamese,
//             Thai, Hebrew, Bengali and Greek prose (routing_prose_<code>.txt, written for this
//             benchmark): the features' latency budget holds in any script, and these take
//             other paths through the decoder (two-byte Cyrillic, Hebrew and Arabic, three-byte
//             Devanagari, Bengali and Vietnamese letters, kana and Hangul beside the
//             ideographs; Vietnamese words are also looked up in pairs, Thai runs searched for
//             phrases, Greek runs read as words or maths symbols).
// The data files are repeated as needed to reach the size, and cut on a code point boundary.
// Two configurations: the defaults (config::RoutingConfig{}, built-in detectors and classifier)
// and the configurable path (4 privacy regexes and a 30-word keyword list on top).
//
// Every decision is timed on its own with std::chrono::steady_clock, single thread, after a
// warm-up. The same loop also runs the decision stage by stage (the same calls Router::signals
// makes, on a scanner built from the same rules), timing each stage, so the stage p50s and the
// whole-decision percentiles come from the same seconds of a noisy machine. The clock's own
// cost per reading is measured and reported; it is inside every figure, once per timed span.
// Throughput (decisions per second per core) comes from a separate back-to-back loop (at least
// half as many decisions, at least 0.25 s), divided by the thread's CPU time (and, also
// reported, by wall time).
//
// For comparison it measures the floor of any router that makes a network call per request:
// one HTTP/1.1 request (the prompt as body) and a tiny fixed response over an already open
// loopback TCP connection to a minimal server thread in the same process. No DNS, no TLS, no
// connection set-up, no JSON, no model: a real remote router (an embedding API, a classifier
// service) costs this plus all of those.
//
// Prints one JSON object.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "routing/complexity_model.h"
#include "routing/policy.h"
#include "routing/privacy_json.h"
#include "routing/privacy_scanner.h"
#include "routing/prompt_features.h"
#include "routing/router.h"

#ifndef TANDEM_BENCH_DATA_DIR
#define TANDEM_BENCH_DATA_DIR "bench/data"
#endif

using namespace tandem;
using namespace tandem::routing;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

namespace {

[[noreturn]] void fail(const std::string& message) {
  std::cerr << "routing_bench: " << message << "\n";
  std::exit(1);
}

double micros(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

struct Stats {
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};

// Nearest-rank percentiles.
Stats stats_of(std::vector<double> values) {
  Stats s;
  if (values.empty()) {
    return s;
  }
  std::sort(values.begin(), values.end());
  const auto rank = [&](double q) {
    const auto k = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
    return values[std::clamp<size_t>(k, 1, values.size()) - 1];
  };
  s.p50 = rank(0.50);
  s.p90 = rank(0.90);
  s.p99 = rank(0.99);
  s.max = values.back();
  double sum = 0;
  for (double v : values) {
    sum += v;
  }
  s.mean = sum / static_cast<double>(values.size());
  return s;
}

json to_json(const Stats& s) {
  const auto r = [](double v) { return std::round(v * 1000.0) / 1000.0; };
  return {{"p50_us", r(s.p50)},
          {"p90_us", r(s.p90)},
          {"p99_us", r(s.p99)},
          {"max_us", r(s.max)},
          {"mean_us", r(s.mean)}};
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fail("cannot read " + path + " (--data names the folder of routing_prose_*.txt)");
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

bool is_continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

size_t code_points(std::string_view s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return !is_continuation(c); }));
}

// The first `chars` code points of `source` repeated (paragraphs joined by a newline).
std::string prompt_of(const std::string& source, size_t chars) {
  std::string text;
  size_t have = 0;
  size_t i = 0;
  while (have < chars) {
    if (i == source.size()) {
      i = 0;
    }
    const size_t begin = i++;
    while (i < source.size() && is_continuation(source[i])) {
      ++i;
    }
    text.append(source, begin, i - begin);
    ++have;
  }
  return text;
}

// The same prose with its few non-ASCII characters (curly quotes, dashes, ellipses) replaced by
// ASCII ones: the privacy scanner skips its folding pass for pure-ASCII text.
std::string ascii_only(const std::string& text) {
  static const std::pair<std::string_view, std::string_view> kReplacements[] = {
      {"\u2019", "'"}, {"\u2018", "'"}, {"\u201c", "\""},  {"\u201d", "\""},
      {"\u2014", "-"}, {"\u2013", "-"}, {"\u2026", "..."},
  };
  std::string out;
  for (size_t i = 0; i < text.size();) {
    bool replaced = false;
    for (const auto& [from, to] : kReplacements) {
      if (text.compare(i, from.size(), from) == 0) {
        out += to;
        i += from.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) {
      out += text[i++];
    }
  }
  for (char c : out) {
    if ((static_cast<unsigned char>(c) & 0x80) != 0) {
      fail("ascii_only: a non-ASCII character is left; add it to the replacements");
    }
  }
  return out;
}

// A Visa test number (Luhn-valid) at the very end of the prompt.
constexpr std::string_view kCardTail = " Please charge it to my card 4111 1111 1111 1111, thanks.";

std::string with_card_at_end(const std::string& source, size_t chars) {
  const size_t tail = code_points(kCardTail);
  return prompt_of(source, chars > tail ? chars - tail : 0) + std::string(kCardTail);
}

// The configurable path: a few privacy regexes (two with a literal prefix, one without, one
// case-insensitive phrase) and a 30-word keyword list, ASCII and CJK words, single and multi-word.
config::RoutingConfig configured_routing() {
  config::RoutingConfig c;
  c.privacy.patterns = {
      {"employee_id", "EMP-[0-9]{6}"},
      {"ticket", "SEC-[0-9]{3,6}"},
      {"internal_host", "[a-z0-9-]+\\.corp\\.example\\.com"},
      {"codename", "(?i)project\\s+(falcon|nightjar)"},
  };
  c.privacy.keywords = {{"sensitive",
                         {"diagnosis",
                          "HIV",
                          "chemotherapy",
                          "prescription",
                          "psychiatrist",
                          "pregnancy test",
                          "antidepressant",
                          "insulin dose",
                          "medical record",
                          "patient id",
                          "rehab",
                          "salary",
                          "payslip",
                          "performance review",
                          "disciplinary",
                          "termination letter",
                          "lawsuit",
                          "settlement offer",
                          "attorney",
                          "custody",
                          "divorce",
                          "bankruptcy",
                          "overdraft",
                          "credit score",
                          "passport number",
                          "date of birth",
                          "home address",
                          "criminal record",
                          "病历",
                          "诊断"}}};
  if (c.privacy.keywords[0].words.size() != 30) {
    fail("the keyword list must hold 30 words");
  }
  return c;
}

// A prompt as the messages of a chat request: one user message, or a conversation's (the
// thread variants) in order, after a system prompt (the app variants) or none.
struct Turns {
  std::vector<std::string> user;
  std::string system;
};

json body_for(const Turns& turns) {
  json messages = json::array();
  if (!turns.system.empty()) {
    messages.push_back({{"role", "system"}, {"content", turns.system}});
  }
  for (const auto& turn : turns.user) {
    messages.push_back({{"role", "user"}, {"content", turn}});
  }
  return {{"model", "tandem"}, {"messages", messages}, {"max_tokens", 256}, {"temperature", 0.7}};
}

// What the gateway's planner gives the router; `joined` and `earlier` hold what it views.
RouteInput input_for(const Turns& turns, std::string& joined,
                     std::vector<std::string_view>& earlier) {
  joined = turns.system;
  for (const auto& turn : turns.user) {
    joined += (joined.empty() ? "" : "\n") + turn;
  }
  earlier.assign(turns.user.begin(), turns.user.end() - 1);
  RouteInput input;
  input.text = joined;
  input.prompt.system = turns.system;
  input.prompt.last_user = turns.user.back();
  input.prompt.earlier_user = earlier;
  input.prompt.total_chars = joined.size();
  input.prompt.turns = 2 * turns.user.size() - 1;  // with the assistant's replies between
  return input;
}

// The app variants' system prompt: a task, then 1,365 characters of the same prose (1.4 KB of
// English, 4 KB of Chinese; an agent's is often longer), so the router reads its first KiB
// (prompt_features.h) before the user message.
std::string app_system(const std::string& prose) {
  return "Extract every date and every amount from the user's text into JSON.\n" +
         prompt_of(prose, 4096 / 3);
}

// The thread variants' user messages: the size split among them, so the router reads the
// thread (thread_task.h) before the last message.
constexpr size_t kThreadMessages = 4;

volatile size_t g_sink = 0;  // keeps results alive

double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Cost of one steady_clock reading, median of many back-to-back pairs.
double clock_overhead_ns() {
  std::vector<double> ns(200000);
  for (auto& v : ns) {
    const auto a = Clock::now();
    const auto b = Clock::now();
    v = std::chrono::duration<double, std::nano>(b - a).count();
  }
  return stats_of(ns).p50;
}

json run_case(const Router& router, const PrivacyScanner& scanner, const std::string& config_name,
              const std::string& variant, size_t chars, const Turns& turns, int iterations,
              int warmup, double throughput_seconds) {
  const HealthSnapshot health;  // both tiers up
  std::string text;
  std::vector<std::string_view> earlier;
  RouteInput input = input_for(turns, text, earlier);
  const json body = body_for(turns);
  input.document = &body;  // as the gateway routes: on the parsed body, every field of it
  auto decide = [&] { return router.decide(router.signals(input), health); };
  const ComplexityModel& model = router.model();
  const config::RoutingConfig& cfg = router.config();

  for (int i = 0; i < warmup; ++i) {
    const Decision d = decide();
    g_sink = g_sink + d.reasons.size();
  }

  std::vector<double> whole(static_cast<size_t>(iterations));
  std::vector<double> scan(whole.size()), text_scan(whole.size()), features(whole.size()),
      classifier(whole.size()), policy(whole.size());
  const auto loop_start = Clock::now();
  Clock::duration whole_total{};
  for (size_t i = 0; i < whole.size(); ++i) {
    {  // the decision, as the gateway makes it
      const auto t0 = Clock::now();
      const Decision d = decide();
      const auto t1 = Clock::now();
      g_sink = g_sink + d.reasons.size();
      whole[i] = micros(t1 - t0);
      whole_total += t1 - t0;
    }
    {  // the same work stage by stage (review rules are not configured in either config)
      const auto t0 = Clock::now();
      RouteSignals s;
      s.hints = input.hints;
      auto scanned = scan_json_document(scanner, body);
      s.privacy = std::move(scanned->findings);
      const auto t1 = Clock::now();
      const PromptFeatures f = extract_features(input.prompt);
      const auto t2 = Clock::now();
      s.complexity = model.score(f);
      const auto t3 = Clock::now();
      const Decision d = routing::decide(cfg, s, health);
      const auto t4 = Clock::now();
      g_sink = g_sink + d.reasons.size();
      // For comparison: the scan of the message text alone, as the router did before it read
      // every field (not part of the decision).
      const auto t5 = Clock::now();
      g_sink = g_sink + scanner.scan(input.text).size();
      text_scan[i] = micros(Clock::now() - t5);
      scan[i] = micros(t1 - t0);
      features[i] = micros(t2 - t1);
      classifier[i] = micros(t3 - t2);
      policy[i] = micros(t4 - t3);
    }
  }
  const double loop_seconds = std::chrono::duration<double>(Clock::now() - loop_start).count();

  // Throughput: decisions back to back, untimed one by one, at least half as many as above and
  // for at least `throughput_seconds` (a quarter of a second). Thread CPU time leaves out the time
  // the thread was not running (other tenants, other processes), which wall time cannot.
  size_t throughput_n = 0;
  const double cpu0 = thread_cpu_seconds();
  const auto wall0 = Clock::now();
  double wall_s = 0;
  while (throughput_n < whole.size() / 2 || wall_s < throughput_seconds) {
    for (int k = 0; k < 100; ++k) {
      const Decision d = decide();
      g_sink = g_sink + d.reasons.size();
    }
    throughput_n += 100;
    wall_s = std::chrono::duration<double>(Clock::now() - wall0).count();
  }
  const double cpu_s = thread_cpu_seconds() - cpu0;

  // What the decision was, for the reader to check that each variant takes the path it should.
  const RouteSignals signals = router.signals(input);
  const Decision decision = router.decide(signals, health);
  json findings = json::array();
  for (const auto& f : signals.privacy) {
    findings.push_back(f.detector);
  }
  const Stats w = stats_of(whole);
  const Stats scan_s = stats_of(scan);
  const Stats text_scan_s = stats_of(text_scan);
  const Stats features_s = stats_of(features);
  const Stats classifier_s = stats_of(classifier);
  const Stats policy_s = stats_of(policy);
  json row = {
      {"config", config_name},
      {"variant", variant},
      {"chars", chars},
      {"bytes", text.size()},
      {"iterations", iterations},
      {"decision", to_json(w)},
      // Decisions that took over 1 ms: on a shared machine, the thread was descheduled.
      {"over_1ms", std::count_if(whole.begin(), whole.end(), [](double us) { return us > 1000; })},
      {"decisions_per_second", static_cast<double>(throughput_n) / wall_s},
      {"decisions_per_cpu_second", static_cast<double>(throughput_n) / cpu_s},
      {"throughput_decisions", throughput_n},
      {"timed_decisions_per_second",
       static_cast<double>(whole.size()) / std::chrono::duration<double>(whole_total).count()},
      {"stages_p50_us",
       {{"privacy_scan", scan_s.p50},
        {"privacy_scan_text_only", text_scan_s.p50},
        {"features", features_s.p50},
        {"classifier", classifier_s.p50},
        {"policy", policy_s.p50}}},
      {"stages_p99_us",
       {{"privacy_scan", scan_s.p99},
        {"features", features_s.p99},
        {"classifier", classifier_s.p99},
        {"policy", policy_s.p99}}},
      {"loop_seconds", loop_seconds},
      {"privacy_findings", findings},
      {"complexity", signals.complexity},
      {"tier", tier_name(decision.tier)},
      {"pattern", pattern_name(decision.pattern)},
      {"reason", decision.reasons.empty()
                     ? std::string()
                     : std::string(reason_code_name(decision.reasons.front().code))},
  };
  std::cerr << "routing_bench: " << config_name << " " << variant << " " << chars << " chars: p50 "
            << w.p50 << " us, p99 " << w.p99 << " us (" << iterations << ")\n";
  return row;
}

// ---------------------------------------------------------------------------------------------
// The loopback floor: a minimal HTTP/1.1 server thread and a keep-alive client.

constexpr std::string_view kResponse =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 30\r\n\r\n"
    "{\"tier\":\"cloud\",\"score\":0.731}";

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) {
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void serve(int listener) {
  const int fd = ::accept(listener, nullptr, nullptr);
  if (fd < 0) {
    return;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::string buffer;
  std::vector<char> chunk(1 << 16);
  while (true) {
    // One request: headers, then Content-Length bytes of body.
    size_t header_end = std::string::npos;
    size_t body_length = 0;
    while (true) {
      if (header_end == std::string::npos) {
        header_end = buffer.find("\r\n\r\n");
        if (header_end != std::string::npos) {
          header_end += 4;
          const size_t at = buffer.find("Content-Length: ");
          if (at != std::string::npos && at < header_end) {
            body_length = std::stoul(buffer.substr(at + 16));
          }
        }
      }
      if (header_end != std::string::npos && buffer.size() >= header_end + body_length) {
        break;
      }
      const ssize_t n = ::recv(fd, chunk.data(), chunk.size(), 0);
      if (n <= 0) {
        ::close(fd);
        return;
      }
      buffer.append(chunk.data(), static_cast<size_t>(n));
    }
    buffer.erase(0, header_end + body_length);
    if (!write_all(fd, kResponse)) {
      break;
    }
  }
  ::close(fd);
}

json run_loopback(const std::vector<std::pair<size_t, std::string>>& prompts, int iterations,
                  int long_iterations, int warmup) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (listener < 0 ||
      ::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(listener, 1) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    fail("loopback server: " + std::generic_category().message(errno));
  }
  std::thread server(serve, listener);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    fail("loopback client: " + std::generic_category().message(errno));
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

  json rows = json::array();
  std::vector<char> chunk(4096);
  for (const auto& [chars, text] : prompts) {
    // Built once, outside the timing: the floor does not even pay for building the request.
    const std::string request =
        "POST /route HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: text/plain; charset=utf-8\r\nContent-Length: " +
        std::to_string(text.size()) + "\r\n\r\n" + text;
    const auto round_trip = [&] {
      if (!write_all(fd, request)) {
        fail("loopback: send failed");
      }
      size_t received = 0;
      while (received < kResponse.size()) {
        const ssize_t n = ::recv(fd, chunk.data(), chunk.size(), 0);
        if (n <= 0) {
          fail("loopback: connection closed");
        }
        received += static_cast<size_t>(n);
      }
    };
    const int n = chars > 2000 ? long_iterations : iterations;
    for (int i = 0; i < warmup; ++i) {
      round_trip();
    }
    std::vector<double> us(static_cast<size_t>(n));
    for (auto& v : us) {
      const auto t0 = Clock::now();
      round_trip();
      v = micros(Clock::now() - t0);
    }
    const Stats s = stats_of(us);
    rows.push_back({{"chars", chars},
                    {"bytes", text.size()},
                    {"request_bytes", request.size()},
                    {"iterations", n},
                    {"round_trip", to_json(s)},
                    {"requests_per_second", 1e6 / s.mean}});
    std::cerr << "routing_bench: loopback HTTP " << chars << " chars: p50 " << s.p50 << " us, p99 "
              << s.p99 << " us\n";
  }
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
  server.join();
  ::close(listener);
  return rows;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      return colon == std::string::npos ? line
                                        : line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Router ingress decision benchmark", "routing_bench"};
  std::string data = TANDEM_BENCH_DATA_DIR;
  int iterations = 20000;
  int long_iterations = 5000;
  int warmup = 1000;
  std::vector<size_t> sizes = {100, 2000, 20000};
  app.add_option("--data", data, "Folder of the routing_prose_<language>.txt files")
      ->capture_default_str();
  app.add_option("-n,--iterations", iterations, "Timed decisions per case up to 2,000 chars")
      ->capture_default_str();
  app.add_option("--long-iterations", long_iterations, "Timed decisions per case above 2,000 chars")
      ->capture_default_str();
  app.add_option("--warmup", warmup, "Untimed decisions before each case")->capture_default_str();
  app.add_option("--sizes", sizes, "Prompt sizes in characters")->capture_default_str();
  std::string only;
  bool loopback = true;
  double throughput_seconds = 0.25;
  app.add_option("--throughput-seconds", throughput_seconds,
                 "Least wall time of each throughput loop (0 for instruction counts: a fixed "
                 "number of decisions)")
      ->capture_default_str();
  app.add_option("--only", only, "Run only the cases whose CONFIG/VARIANT/CHARS contains this");
  app.add_flag("!--no-loopback", loopback, "Skip the loopback HTTP comparison");
  CLI11_PARSE(app, argc, argv);

  const std::string en = read_file(data + "/routing_prose_en.txt");
  const std::string zh = read_file(data + "/routing_prose_zh.txt");
  const std::string en_ascii = ascii_only(en);
  std::vector<std::pair<std::string, std::string>> other_scripts;
  for (const char* code : {"ja", "ko", "ru", "ar", "hi", "vi", "th", "he", "bn", "el"}) {
    other_scripts.emplace_back(code, read_file(data + "/routing_prose_" + code + ".txt"));
  }
  const std::string& russian = std::ranges::find(other_scripts, std::string("ru"),
                                                 &std::pair<std::string, std::string>::first)
                                   ->second;

  struct Named {
    std::string name;
    config::RoutingConfig config;
  };
  const std::vector<Named> configs = {{"default", config::RoutingConfig{}},
                                      {"configured", configured_routing()}};

  json out;
  out["machine"] = {{"nproc", std::thread::hardware_concurrency()}, {"cpu", cpu_model()}};
  out["clock_overhead_ns"] = clock_overhead_ns();
  out["iterations"] = iterations;
  out["long_iterations"] = long_iterations;
  out["warmup"] = warmup;
  out["results"] = json::array();
  for (const Named& named : configs) {
    auto router = Router::create(named.config);
    if (!router) {
      fail(named.name + ": " + router.error().message);
    }
    auto scanner = PrivacyScanner::create(privacy_rules(named.config.privacy));
    if (!scanner) {
      fail(named.name + ": " + scanner.error().message);
    }
    for (size_t chars : sizes) {
      const int n = chars > 2000 ? long_iterations : iterations;
      const int w = chars > 2000 ? std::max(1, warmup / 10) : warmup;
      std::vector<std::pair<std::string, Turns>> variants = {
          {"en", {{prompt_of(en, chars)}, ""}},
          {"en-ascii", {{prompt_of(en_ascii, chars)}, ""}},
          {"en+card", {{with_card_at_end(en, chars)}, ""}},
          {"zh", {{prompt_of(zh, chars)}, ""}},
          {"en-thread", {std::vector(kThreadMessages, prompt_of(en, chars / kThreadMessages)), ""}},
          {"zh-thread", {std::vector(kThreadMessages, prompt_of(zh, chars / kThreadMessages)), ""}},
          {"en-app", {{prompt_of(en, chars)}, app_system(en)}},
          {"zh-app", {{prompt_of(zh, chars)}, app_system(zh)}},
      };
      for (const auto& [code, prose] : other_scripts) {
        variants.emplace_back(code, Turns{{prompt_of(prose, chars)}, ""});
      }
      // A conversation in a language the task model does not read: its stand-in scans the
      // earlier turns' windows for cues (thread_task.h), which English and Chinese skip.
      variants.emplace_back(
          "ru-thread",
          Turns{std::vector(kThreadMessages, prompt_of(russian, chars / kThreadMessages)), ""});
      for (const auto& [variant, turns] : variants) {
        if (!only.empty() &&
            (named.name + "/" + variant + "/" + std::to_string(chars)).find(only) ==
                std::string::npos) {
          continue;
        }
        out["results"].push_back(run_case(*router.value(), scanner.value(), named.name, variant,
                                          chars, turns, n, w, throughput_seconds));
      }
    }
  }

  out["loopback_http"] = json::array();
  if (loopback) {
    std::vector<std::pair<size_t, std::string>> prompts;
    prompts.reserve(sizes.size());
    for (size_t chars : sizes) {
      prompts.emplace_back(chars, prompt_of(en, chars));
    }
    out["loopback_http"] = run_loopback(prompts, iterations, long_iterations, warmup);
  }
  out["sink"] = static_cast<size_t>(g_sink);
  std::cout << out.dump(2) << "\n";
  return 0;
}
