#include "telemetry/skew_monitor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace tandem::telemetry {
namespace {

// Where the policy lives in the configuration, for messages a user can act on.
constexpr size_t kSha256HexDigits = 64;

constexpr const char* kPolicy = "operations.version";

// A policy field's full name, as the configuration spells it.
std::string policy_field(const char* field) {
  return std::string(kPolicy) + "." + field;
}

// An agreement or a share as it appears in alerts: three decimals.
std::string fixed3(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", value);
  return buffer;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

std::string bounded(std::string_view text) {
  return std::string(text.substr(0, kMaxSkewTextBytes));
}

std::string lower_hex(std::string_view text) {
  std::string out = bounded(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

bool is_hex(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

// An allowed_edge_sha256 entry's problem, or "".
std::string sha_prefix_problem(std::string_view entry) {
  if (!is_hex(entry)) {
    return "is not hexadecimal";
  }
  if (entry.size() < kMinShaPrefixHexDigits) {
    return "has " + std::to_string(entry.size()) + " hex digits; at least " +
           std::to_string(kMinShaPrefixHexDigits) +
           " are needed so that a prefix cannot match by accident";
  }
  if (entry.size() > kSha256HexDigits) {
    return "is longer than a sha256 (64 hex digits)";
  }
  return "";
}

// Compares two runs of digits by value, whatever their length.
int compare_numbers(std::string_view a, std::string_view b) {
  a.remove_prefix(std::min(a.find_first_not_of('0'), a.size()));
  b.remove_prefix(std::min(b.find_first_not_of('0'), b.size()));
  if (a.size() != b.size()) {
    return a.size() < b.size() ? -1 : 1;
  }
  const int c = a.compare(b);
  return (c > 0) - (c < 0);
}

// Bytewise, except that runs of digits compare by value ("rc10" > "rc9").
int compare_natural(std::string_view a, std::string_view b) {
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      const size_t i_end = std::min(a.find_first_not_of("0123456789", i), a.size());
      const size_t j_end = std::min(b.find_first_not_of("0123456789", j), b.size());
      if (const int c = compare_numbers(a.substr(i, i_end - i), b.substr(j, j_end - j))) {
        return c;
      }
      i = i_end;
      j = j_end;
      continue;
    }
    const auto ca = static_cast<unsigned char>(a[i]);
    const auto cb = static_cast<unsigned char>(b[j]);
    if (ca != cb) {
      return ca < cb ? -1 : 1;
    }
    ++i;
    ++j;
  }
  const size_t rest_a = a.size() - i;
  const size_t rest_b = b.size() - j;
  return (rest_a > rest_b) - (rest_a < rest_b);
}

struct ParsedVersion {
  std::vector<std::string_view> numbers;
  std::string_view suffix;  // pre-release marker; empty for a release
};

// Only for text that passed is_version().
ParsedVersion parse_version(std::string_view text) {
  if (text.front() == 'v' || text.front() == 'V') {
    text.remove_prefix(1);
  }
  text = text.substr(0, text.find('+'));  // build metadata does not order versions
  ParsedVersion out;
  size_t i = 0;
  while (i < text.size() && is_digit(text[i])) {
    const size_t end = std::min(text.find_first_not_of("0123456789", i), text.size());
    out.numbers.push_back(text.substr(i, end - i));
    i = end;
    if (i + 1 < text.size() && text[i] == '.' && is_digit(text[i + 1])) {
      ++i;
    } else {
      break;
    }
  }
  std::string_view rest = text.substr(i);
  if (!rest.empty() && (rest.front() == '-' || rest.front() == '.' || rest.front() == '_')) {
    rest.remove_prefix(1);
  }
  out.suffix = rest;
  return out;
}

std::string quoted(std::string_view text) {
  return "\"" + std::string(text.substr(0, 80)) + (text.size() > 80 ? "...\"" : "\"");
}

}  // namespace

int compare_versions(std::string_view a, std::string_view b) {
  const bool a_version = is_version(a);
  const bool b_version = is_version(b);
  if (!a_version || !b_version) {
    if (a_version != b_version) {
      return a_version ? 1 : -1;
    }
    const int c = a.compare(b);
    return (c > 0) - (c < 0);
  }
  const ParsedVersion pa = parse_version(a);
  const ParsedVersion pb = parse_version(b);
  const size_t components = std::max(pa.numbers.size(), pb.numbers.size());
  for (size_t i = 0; i < components; ++i) {
    const std::string_view na = i < pa.numbers.size() ? pa.numbers[i] : "0";
    const std::string_view nb = i < pb.numbers.size() ? pb.numbers[i] : "0";
    if (const int c = compare_numbers(na, nb)) {
      return c;
    }
  }
  if (pa.suffix.empty() || pb.suffix.empty()) {
    // A release is newer than its pre-releases.
    return static_cast<int>(pa.suffix.empty()) - static_cast<int>(pb.suffix.empty());
  }
  return compare_natural(pa.suffix, pb.suffix);
}

bool is_version(std::string_view text) {
  if (text.empty() || text.size() > kMaxSkewTextBytes) {
    return false;
  }
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c > ' ' && c < 0x7f; })) {
    return false;
  }
  if (text.front() == 'v' || text.front() == 'V') {
    text.remove_prefix(1);
  }
  return !text.empty() && is_digit(text.front());
}

std::string SkewOptions::validate() const {
  if (!min_edge_version.empty() && !is_version(min_edge_version)) {
    return "min_edge_version " + quoted(min_edge_version) +
           " is not a version (dotted numbers, such as 1.3)";
  }
  for (size_t i = 0; i < allowed_edge_sha256.size(); ++i) {
    const std::string problem = sha_prefix_problem(allowed_edge_sha256[i]);
    if (!problem.empty()) {
      return "allowed_edge_sha256[" + std::to_string(i) + "] " + quoted(allowed_edge_sha256[i]) +
             " " + problem;
    }
  }
  if (!(min_agreement >= 0.0 && min_agreement <= 1.0)) {
    return "min_agreement must be between 0 and 1, got " + std::to_string(min_agreement);
  }
  if (!(max_agreement_drop > 0.0 && max_agreement_drop <= 1.0)) {
    return "max_agreement_drop must be above 0 and at most 1, got " +
           std::to_string(max_agreement_drop);
  }
  if (history < 1 || history > kMaxCanaryHistory) {
    return "history must be between 1 and " + std::to_string(kMaxCanaryHistory) + ", got " +
           std::to_string(history);
  }
  return "";
}

std::optional<double> canary_agreement(const CanaryRun& run) {
  const size_t answered = run.prompts - std::min(run.failed, run.prompts);
  if (answered == 0) {
    return std::nullopt;
  }
  return static_cast<double>(std::min(run.agreed, answered)) / static_cast<double>(answered);
}

SkewMonitor::SkewMonitor(SkewOptions options) : options_(std::move(options)) {
  const SkewOptions defaults;
  options_.min_edge_version = bounded(options_.min_edge_version);
  if (!(options_.min_agreement >= 0.0 && options_.min_agreement <= 1.0)) {
    options_.min_agreement = std::isnan(options_.min_agreement)
                                 ? defaults.min_agreement
                                 : std::clamp(options_.min_agreement, 0.0, 1.0);
  }
  if (!(options_.max_agreement_drop > 0.0 && options_.max_agreement_drop <= 1.0)) {
    options_.max_agreement_drop =
        options_.max_agreement_drop > 1.0 ? 1.0 : defaults.max_agreement_drop;
  }
  options_.history = std::clamp<size_t>(options_.history, 1, kMaxCanaryHistory);
  sha_policy_ = !options_.allowed_edge_sha256.empty();
  for (const std::string& entry : options_.allowed_edge_sha256) {
    if (sha_prefix_problem(entry).empty()) {
      allowed_sha_.push_back(lower_hex(entry));
    }
  }
}

void SkewMonitor::set_edge(const ModelVersion& edge, int64_t now_ms) {
  ModelVersion next{bounded(edge.name), lower_hex(edge.sha256), bounded(edge.version)};
  std::lock_guard lock(mutex_);
  if (!edge_set_) {
    edge_since_ms_ = now_ms;
  } else if (next.sha256 != edge_.sha256) {
    ++edge_changes_;
    previous_edge_sha256_ = edge_.sha256;
    edge_since_ms_ = now_ms;
    edge_unverified_ = true;
  }
  edge_ = std::move(next);
  edge_set_ = true;
}

void SkewMonitor::observe_cloud(const std::string& upstream, const std::string& reported_model,
                                int64_t now_ms) {
  if (reported_model.empty()) {
    return;
  }
  std::string name = bounded(upstream);
  std::string model = bounded(reported_model);
  std::lock_guard lock(mutex_);
  auto found = cloud_.find(name);
  if (found == cloud_.end()) {
    if (cloud_.size() < kMaxUpstreams) {
      CloudModelSeen seen;
      seen.upstream = name;
      seen.model = std::move(model);
      seen.first_seen_ms = now_ms;
      seen.last_seen_ms = now_ms;
      cloud_.emplace(std::move(name), std::move(seen));
    }
    return;
  }
  CloudModelSeen& seen = found->second;
  if (seen.model == model) {
    seen.last_seen_ms = std::max(seen.last_seen_ms, now_ms);
    return;
  }
  seen.previous_model = std::exchange(seen.model, std::move(model));
  ++seen.changes;
  seen.changed_at_ms = now_ms;
  seen.first_seen_ms = now_ms;
  seen.last_seen_ms = now_ms;
  seen.unverified = true;
}

void SkewMonitor::record_canary(const CanaryRun& run) {
  CanaryRun kept = run;
  kept.failed = std::min(kept.failed, kept.prompts);
  kept.agreed = std::min(kept.agreed, kept.prompts - kept.failed);
  kept.edge_sha256 = lower_hex(kept.edge_sha256);
  kept.cloud_model = bounded(kept.cloud_model);
  std::lock_guard lock(mutex_);
  // The run measured the pair in service at its time: it verifies changes made before it.
  if (edge_unverified_ && kept.at_ms >= edge_since_ms_) {
    edge_unverified_ = false;
  }
  for (auto& [name, seen] : cloud_) {
    if (seen.unverified && kept.at_ms >= seen.changed_at_ms) {
      seen.unverified = false;
    }
  }
  history_.push_back(std::move(kept));
  while (history_.size() > options_.history) {
    history_.pop_front();
  }
}

SkewMonitor::EdgeCheck SkewMonitor::check_edge() const {
  std::lock_guard lock(mutex_);
  return check_edge_locked();
}

SkewMonitor::EdgeCheck SkewMonitor::check_edge_locked() const {
  const bool version_policy = !options_.min_edge_version.empty();
  if (!version_policy && !sha_policy_) {
    return {};
  }
  if (!edge_set_) {
    return {false, "no edge model is known yet; the " + std::string(kPolicy) +
                       " policy needs its identity"};
  }
  std::vector<std::string> problems;
  if (sha_policy_) {
    const auto matches = [&](const std::string& prefix) {
      return edge_.sha256.starts_with(prefix);
    };
    if (allowed_sha_.empty()) {
      problems.push_back(
          policy_field("allowed_edge_sha256") + " has no valid entry (hex, at least " +
          std::to_string(kMinShaPrefixHexDigits) + " digits), so no edge model is allowed");
    } else if (edge_.sha256.empty()) {
      problems.push_back("edge model has no sha256; " + policy_field("allowed_edge_sha256") +
                         " requires one");
    } else if (std::none_of(allowed_sha_.begin(), allowed_sha_.end(), matches)) {
      problems.push_back("edge model sha256 " + edge_.sha256 + " is not in " +
                         policy_field("allowed_edge_sha256"));
    }
  }
  if (version_policy) {
    const std::string& min = options_.min_edge_version;
    const std::string policy = policy_field("min_edge_version") + " " + min;
    if (!is_version(min)) {
      problems.push_back(policy_field("min_edge_version") + " " + quoted(min) +
                         " is not a version, so no edge model satisfies it");
    } else if (edge_.version.empty()) {
      problems.push_back("edge model has no general.version; " + policy + " requires one");
    } else if (!is_version(edge_.version)) {
      problems.push_back("edge model general.version " + quoted(edge_.version) +
                         " is not a version; " + policy + " requires one");
    } else if (compare_versions(edge_.version, min) < 0) {
      problems.push_back("edge model version " + edge_.version + " is below " + policy);
    }
  }
  EdgeCheck check;
  for (const std::string& problem : problems) {
    check.problem += (check.problem.empty() ? "" : "; ") + problem;
  }
  check.allowed = problems.empty();
  return check;
}

// The model alerts: an edge the version policy refuses, and models changed since the last
// canary run.
void SkewMonitor::model_alerts_locked(Snapshot& out) const {
  if (!out.edge_check.allowed) {
    out.alerts.push_back({"skew.edge_version", out.edge_check.problem, edge_since_ms_});
  }
  if (edge_unverified_) {
    out.alerts.push_back({"skew.edge_changed",
                          "edge model sha256 changed from " + previous_edge_sha256_ + " to " +
                              edge_.sha256 + " (" + edge_.name + ", version " +
                              (edge_.version.empty() ? "unknown" : edge_.version) +
                              "); no canary run since",
                          edge_since_ms_});
  }
  for (const CloudModelSeen& seen : out.cloud) {
    if (seen.unverified) {
      out.alerts.push_back({"skew.cloud_model_changed",
                            "upstream " + seen.upstream + " reported model " + seen.model +
                                " (was " + seen.previous_model + "); no canary run since",
                            seen.changed_at_ms});
    }
  }
}

// The canary alerts, from the runs so far (at least one): the last run failed, agreed too
// little, or agreed much less than the runs before it.
void SkewMonitor::canary_alerts_locked(Snapshot& out) const {
  const CanaryRun& last = history_.back();
  out.last_agreement = canary_agreement(last);
  double sum = 0.0;
  size_t measured = 0;
  for (size_t i = 0; i + 1 < history_.size(); ++i) {
    if (const auto agreement = canary_agreement(history_[i])) {
      sum += *agreement;
      ++measured;
    }
  }
  if (measured > 0) {
    out.mean_agreement = sum / static_cast<double>(measured);
  }
  // When the trailing run of runs for which `pred` holds began.
  const auto streak_since = [&](auto pred) {
    auto it = history_.rbegin();
    int64_t since = it->at_ms;
    for (; it != history_.rend() && pred(*it); ++it) {
      since = it->at_ms;
    }
    return since;
  };

  if (!out.last_agreement) {
    out.alerts.push_back(
        {"skew.canary_failed",
         "no prompt of the last canary run was answered by both tiers (" +
             std::to_string(last.prompts) + " prompts, " + std::to_string(last.failed) + " failed)",
         streak_since([](const CanaryRun& run) { return !canary_agreement(run); })});
    return;
  }
  const double agreement = *out.last_agreement;
  if (agreement < options_.min_agreement) {
    const double floor = options_.min_agreement;
    out.alerts.push_back({"skew.low_agreement",
                          "canary agreement " + fixed3(agreement) + " (" +
                              std::to_string(last.agreed) + " of " +
                              std::to_string(last.prompts - last.failed) +
                              " answered) is below min_agreement " + fixed3(floor),
                          streak_since([floor](const CanaryRun& run) {
                            const auto a = canary_agreement(run);
                            return a && *a < floor;
                          })});
  }
  if (out.mean_agreement && agreement < *out.mean_agreement - options_.max_agreement_drop) {
    out.alerts.push_back({"skew.agreement_drop",
                          "canary agreement " + fixed3(agreement) + " is " +
                              fixed3(*out.mean_agreement - agreement) + " below the mean " +
                              fixed3(*out.mean_agreement) + " of the " + std::to_string(measured) +
                              " earlier runs (max_agreement_drop " +
                              fixed3(options_.max_agreement_drop) + ")",
                          last.at_ms});
  }
}

SkewMonitor::Snapshot SkewMonitor::snapshot() const {
  std::lock_guard lock(mutex_);
  Snapshot out;
  out.edge = edge_;
  out.edge_since_ms = edge_since_ms_;
  out.edge_changes = edge_changes_;
  out.previous_edge_sha256 = previous_edge_sha256_;
  for (const auto& [name, seen] : cloud_) {
    out.cloud.push_back(seen);
  }
  out.history.assign(history_.begin(), history_.end());
  out.edge_check = check_edge_locked();
  model_alerts_locked(out);
  if (!history_.empty()) {
    canary_alerts_locked(out);
  }
  return out;
}

}  // namespace tandem::telemetry
