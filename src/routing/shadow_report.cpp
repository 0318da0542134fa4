#include "routing/shadow_report.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <map>

#include "common/hash.h"

namespace tandem::routing {
namespace {

// Sample sizes past this are not worth estimating: the rate is as good as the target.
constexpr double kMaxEstimate = 1e9;

std::vector<std::string> tokens(std::string_view text) {
  std::vector<std::string> out;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  };
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')) {
        word.push_back(static_cast<char>(c));
      } else if (c >= 'A' && c <= 'Z') {
        word.push_back(static_cast<char>(c - 'A' + 'a'));
      } else {
        flush();
      }
      ++i;
      continue;
    }
    // A non-ASCII character is a token of its own: its lead byte and continuation bytes.
    flush();
    size_t end = i + 1;
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
      ++end;
    }
    out.emplace_back(text.substr(i, end - i));
    i = end;
  }
  flush();
  return out;
}

bool decided(double rate, double n, const config::ShadowConfig& config) {
  const Interval b = wilson_interval(rate * n, n);
  if (b.upper < config.target_quality) {
    return true;
  }
  return n >= config.min_samples && b.lower >= config.target_quality;
}

// The smallest sample count at which `rate` would reach a verdict, or nullopt.
std::optional<double> samples_to_decide(double rate, double from,
                                        const config::ShadowConfig& config) {
  // Bounds close in on the rate as n grows, never reaching it: a rate equal to the target
  // never decides.
  if (rate == config.target_quality) {
    return std::nullopt;
  }
  // Lower bounds rise and upper bounds fall with n at a fixed rate: double, then bisect
  // between `from` (undecided, or the caller would not ask) and the first decided count.
  double low = from;
  double high = std::max({from + 1, static_cast<double>(config.min_samples)});
  while (!decided(rate, high, config)) {
    low = high;
    high *= 2;
    if (high > kMaxEstimate) {
      return std::nullopt;
    }
  }
  while (high - low > 1) {
    const double mid = std::floor((low + high) / 2);
    (decided(rate, mid, config) ? high : low) = mid;
  }
  return high;
}

ShadowKindReport summarise(const std::string& kind, const ShadowCounts& c,
                           const config::ShadowConfig& config) {
  ShadowKindReport r;
  r.kind = kind;
  r.samples = c.compared;
  r.agreed = c.agreed;
  r.edge_busy = c.edge_busy;
  r.edge_failed = c.edge_failed;
  r.requests = c.requests;
  r.shadowed = c.shadowed;
  const auto n = static_cast<double>(c.compared);
  r.bounds = wilson_interval(static_cast<double>(c.agreed), n);
  if (c.compared > 0) {
    r.agreement = static_cast<double>(c.agreed) / n;
    r.mean_f1 = c.sum_f1 / n;
    r.mean_edge_confidence = c.sum_edge_confidence / n;
    r.mean_edge_ms = c.sum_edge_ms / n;
    r.mean_cloud_ms = c.sum_cloud_ms / n;
    r.mean_edge_tokens = static_cast<double>(c.sum_edge_tokens) / n;
  }
  if (r.samples >= config.min_samples && r.bounds.lower >= config.target_quality) {
    r.verdict = ShadowVerdict::kMoveToEdge;
  } else if (r.bounds.upper < config.target_quality) {
    r.verdict = ShadowVerdict::kStayInCloud;
  } else if (r.samples == 0) {
    r.more_samples = config.min_samples;
  } else if (auto needed = samples_to_decide(r.agreement, n, config)) {
    r.more_samples = static_cast<int64_t>(*needed) - r.samples;
  }
  return r;
}

void add(ShadowCounts& into, const ShadowCounts& c) {
  into.compared += c.compared;
  into.agreed += c.agreed;
  into.edge_busy += c.edge_busy;
  into.edge_failed += c.edge_failed;
  into.sum_f1 += c.sum_f1;
  into.sum_edge_confidence += c.sum_edge_confidence;
  into.sum_edge_ms += c.sum_edge_ms;
  into.sum_cloud_ms += c.sum_cloud_ms;
  into.sum_edge_tokens += c.sum_edge_tokens;
  into.requests += c.requests;
  into.shadowed += c.shadowed;
}

Result<int64_t> bad_since(std::string_view text) {
  return make_error(ErrorCode::kInvalidArgument,
                    "since '" + std::string(text) +
                        "' is not a duration (90s, 30m, 24h, 7d, 2w), a UTC date or time "
                        "(2025-06-01, 2025-06-01T12:00:00Z) or unix milliseconds");
}

// Reads exactly `digits` digits at `at`.
std::optional<int> read_number(std::string_view text, size_t at, size_t digits) {
  if (at + digits > text.size()) {
    return std::nullopt;
  }
  int value = 0;
  const char* first = text.data() + at;
  const auto [ptr, ec] = std::from_chars(first, first + digits, value);
  if (ec != std::errc() || ptr != first + digits) {
    return std::nullopt;
  }
  return value;
}

std::optional<int64_t> parse_utc(std::string_view text) {
  if (!text.empty() && (text.back() == 'Z' || text.back() == 'z')) {
    text.remove_suffix(1);
  }
  const auto y = read_number(text, 0, 4);
  const auto m = read_number(text, 5, 2);
  const auto d = read_number(text, 8, 2);
  if (!y || !m || !d || text[4] != '-' || text[7] != '-') {
    return std::nullopt;
  }
  using namespace std::chrono;
  const year_month_day date{year{*y}, month{static_cast<unsigned>(*m)},
                            day{static_cast<unsigned>(*d)}};
  if (!date.ok()) {
    return std::nullopt;
  }
  int hour = 0;
  int minute = 0;
  int second = 0;
  if (text.size() > 10) {
    const auto h = read_number(text, 11, 2);
    const auto mi = read_number(text, 14, 2);
    if ((text[10] != 'T' && text[10] != ' ') || !h || !mi || text.size() < 16 || text[13] != ':') {
      return std::nullopt;
    }
    hour = *h;
    minute = *mi;
    if (text.size() > 16) {
      const auto s = read_number(text, 17, 2);
      if (text[16] != ':' || !s || text.size() != 19) {
        return std::nullopt;
      }
      second = *s;
    }
    if (hour > 23 || minute > 59 || second > 59) {
      return std::nullopt;
    }
  }
  const auto at = sys_days(date) + hours(hour) + minutes(minute) + seconds(second);
  return duration_cast<milliseconds>(at.time_since_epoch()).count();
}

}  // namespace

Interval wilson_interval(double successes, double trials, double z) {
  if (trials <= 0) {
    return {};
  }
  const double p = std::clamp(successes / trials, 0.0, 1.0);
  const double z2 = z * z;
  const double denominator = 1 + z2 / trials;
  const double centre = (p + z2 / (2 * trials)) / denominator;
  const double half =
      z / denominator * std::sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials));
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

bool shadow_sampled(std::string_view request_id, double share) {
  if (!(share > 0.0)) {
    return false;
  }
  if (share >= 1.0) {
    return true;
  }
  // FNV-1a, then mixed: ids often differ in one digit.
  const double unit = static_cast<double>(mix64(fnv1a64(request_id)) >> 11) * 0x1.0p-53;  // [0, 1)
  return unit < share;
}

double token_f1(std::string_view a, std::string_view b) {
  const std::vector<std::string> ta = tokens(a);
  const std::vector<std::string> tb = tokens(b);
  if (ta.empty() && tb.empty()) {
    return 1.0;
  }
  if (ta.empty() || tb.empty()) {
    return 0.0;
  }
  std::map<std::string_view, int> counts;
  for (const auto& t : ta) {
    ++counts[t];
  }
  size_t common = 0;
  for (const auto& t : tb) {
    auto it = counts.find(t);
    if (it != counts.end() && it->second > 0) {
      --it->second;
      ++common;
    }
  }
  // F1 = 2PR / (P + R) with P = common / |b| and R = common / |a|.
  return 2.0 * static_cast<double>(common) / static_cast<double>(ta.size() + tb.size());
}

const char* shadow_verdict_name(ShadowVerdict verdict) {
  switch (verdict) {
    case ShadowVerdict::kMoveToEdge:
      return "move_to_edge";
    case ShadowVerdict::kStayInCloud:
      return "stay_in_cloud";
    case ShadowVerdict::kNeedMoreSamples:
      break;
  }
  return "need_more_samples";
}

ShadowReport shadow_report(const std::vector<ShadowCounts>& counts,
                           const config::ShadowConfig& config) {
  ShadowReport report;
  report.target_quality = config.target_quality;
  report.min_samples = config.min_samples;
  // Every known kind is listed, counted or not, then whatever else the log holds (a kind a
  // newer version wrote).
  std::vector<std::string> order(std::begin(config::kQueryKinds), std::end(config::kQueryKinds));
  std::map<std::string, ShadowCounts> by_kind;
  ShadowCounts all;
  for (const auto& c : counts) {
    add(by_kind[c.kind], c);
    add(all, c);
    if (std::find(order.begin(), order.end(), c.kind) == order.end()) {
      order.push_back(c.kind);
    }
  }
  report.requests = all.requests;
  report.shadowed = all.shadowed;
  const auto total = static_cast<double>(all.requests);
  for (const auto& kind : order) {
    ShadowKindReport r = summarise(kind, by_kind[kind], config);
    if (all.requests > 0) {
      r.traffic_share = static_cast<double>(r.requests) / total;
      r.movable_share = static_cast<double>(r.shadowed) / total;
    }
    if (r.verdict == ShadowVerdict::kMoveToEdge) {
      report.move_to_edge.push_back(kind);
      report.edge_share_if_moved += r.movable_share;
    }
    report.kinds.push_back(std::move(r));
  }
  report.overall = summarise("overall", all, config);
  if (all.requests > 0) {
    report.overall.traffic_share = 1.0;
    report.overall.movable_share = static_cast<double>(all.shadowed) / total;
  }
  return report;
}

Result<int64_t> parse_since(std::string_view text, int64_t now_unix_ms) {
  if (text.empty()) {
    return bad_since(text);
  }
  if (text.size() >= 10 && text[4] == '-') {
    if (auto at = parse_utc(text)) {
      return *at;
    }
    return bad_since(text);
  }
  int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr == text.data() || value < 0) {
    return bad_since(text);
  }
  const std::string_view unit(ptr, static_cast<size_t>(text.data() + text.size() - ptr));
  if (unit.empty()) {
    return value;  // unix milliseconds
  }
  static const std::pair<std::string_view, int64_t> kUnits[] = {
      {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}, {"d", 86'400'000}, {"w", 604'800'000}};
  for (const auto& [name, ms] : kUnits) {
    if (unit == name) {
      if (value > now_unix_ms / ms) {
        return 0;  // further back than the epoch: everything
      }
      return now_unix_ms - value * ms;
    }
  }
  return bad_since(text);
}

}  // namespace tandem::routing
