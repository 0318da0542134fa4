#include "telemetry/gaming_monitor.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <functional>
#include <limits>

namespace tandem::telemetry {
namespace {

constexpr const char* kStandardKinds[] = {"multiple_choice", "math", "code", "factoid", "open"};
constexpr size_t kOtherKind = kMaxKinds;  // the shared slot after the named kinds

// Series and continued fractions below stop at this relative change, or after this many terms
// (both converge in a few dozen for the df and statistics seen here).
constexpr double kSeriesEpsilon = 1e-15;
constexpr int kSeriesMaxTerms = 1000;
constexpr double kTiny = 1e-300;

// ln Gamma(x) for x > 0 by the Lanczos approximation (g = 7, 9 terms; ~15 digits). Written out
// because std::lgamma may write the global `signgam`, a data race between threads.
double log_gamma(double x) {
  static constexpr double kCoefficients[] = {
      0.99999999999980993,  676.5203681218851,     -1259.1392167224028,
      771.32342877765313,   -176.61502916214059,   12.507343278686905,
      -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};
  constexpr double kPi = 3.14159265358979323846;
  if (x < 0.5) {
    // Reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x).
    return std::log(kPi / std::fabs(std::sin(kPi * x))) - log_gamma(1.0 - x);
  }
  x -= 1.0;
  double sum = kCoefficients[0];
  for (int i = 1; i < 9; ++i) {
    sum += kCoefficients[i] / (x + i);
  }
  const double t = x + 7.5;
  return 0.5 * std::log(2.0 * kPi) + (x + 0.5) * std::log(t) - t + std::log(sum);
}

// The regularised upper incomplete gamma function Q(a, x), a > 0, x > 0: a series for
// x < a + 1 and Lentz's continued fraction beyond (Numerical Recipes, 6.2).
double upper_incomplete_gamma(double a, double x) {
  const double log_prefix = -x + a * std::log(x) - log_gamma(a);
  if (x < a + 1.0) {
    double term = 1.0 / a;
    double sum = term;
    double ap = a;
    for (int n = 0; n < kSeriesMaxTerms; ++n) {
      ap += 1.0;
      term *= x / ap;
      sum += term;
      if (std::fabs(term) < std::fabs(sum) * kSeriesEpsilon) {
        break;
      }
    }
    return std::clamp(1.0 - sum * std::exp(log_prefix), 0.0, 1.0);
  }
  double b = x + 1.0 - a;
  double c = 1.0 / kTiny;
  double d = 1.0 / b;
  double h = d;
  for (int i = 1; i <= kSeriesMaxTerms; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < kTiny) {
      d = kTiny;
    }
    c = b + an / c;
    if (std::fabs(c) < kTiny) {
      c = kTiny;
    }
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < kSeriesEpsilon) {
      break;
    }
  }
  return std::clamp(std::exp(log_prefix) * h, 0.0, 1.0);
}

uint64_t sum_of(std::span<const uint64_t> counts) {
  uint64_t total = 0;
  for (uint64_t n : counts) {
    total += n;
  }
  return total;
}

[[gnu::format(printf, 1, 2)]] std::string format(const char* pattern, ...) {
  char buffer[256];
  va_list args;
  va_start(args, pattern);
  std::vsnprintf(buffer, sizeof buffer, pattern, args);
  va_end(args);
  return buffer;
}

double share(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

std::string GamingOptions::validate() const {
  if (window_ms <= 0) {
    return "window_ms must be positive, got " + std::to_string(window_ms);
  }
  if (min_requests == 0) {
    return "min_requests must be at least 1";
  }
  if (max_requests_per_client == 0) {
    return "max_requests_per_client must be at least 1";
  }
  if (min_requests > max_requests_per_client) {
    return "min_requests (" + std::to_string(min_requests) +
           ") must not exceed max_requests_per_client (" + std::to_string(max_requests_per_client) +
           "), or no client could ever be judged";
  }
  if (!(psi_threshold > 0.0) || !std::isfinite(psi_threshold)) {
    return "psi_threshold must be a positive number, got " + std::to_string(psi_threshold);
  }
  if (!(p_value > 0.0 && p_value < 1.0)) {
    return "p_value must be between 0 and 1 (exclusive), got " + std::to_string(p_value);
  }
  if (!(escalation_cap >= 0.0 && escalation_cap <= 1.0)) {
    return "escalation_cap must be between 0 (flag only) and 1, got " +
           std::to_string(escalation_cap);
  }
  if (max_clients == 0) {
    return "max_clients must be at least 1";
  }
  return "";
}

size_t complexity_quintile(double complexity) {
  if (!(complexity > 0.0)) {  // also NaN
    return 0;
  }
  const double scaled = complexity * static_cast<double>(kComplexityBins);
  if (scaled >= static_cast<double>(kComplexityBins - 1)) {
    return kComplexityBins - 1;
  }
  return static_cast<size_t>(scaled);
}

double chi_square_upper_tail(double statistic, double df) {
  if (!(statistic > 0.0) || !(df > 0.0) || !std::isfinite(df)) {
    return 1.0;
  }
  if (std::isinf(statistic)) {
    return 0.0;
  }
  if (df == 1.0) {
    return std::erfc(std::sqrt(statistic / 2.0));
  }
  if (df == 2.0) {
    return std::exp(-statistic / 2.0);
  }
  return upper_incomplete_gamma(df / 2.0, statistic / 2.0);
}

ChiSquare yates_chi_square(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  // long double holds the products exactly for any count a window can hold (64-bit mantissa).
  using Wide = long double;
  const Wide rows = Wide(a + b) * Wide(c + d);
  const Wide columns = Wide(a + c) * Wide(b + d);
  if (rows == 0 || columns == 0) {
    return {};
  }
  const Wide n = Wide(a) + Wide(b) + Wide(c) + Wide(d);
  const Wide corrected = std::max<Wide>(0, std::fabs(Wide(a) * d - Wide(b) * c) - n / 2);
  const double statistic = static_cast<double>(n * corrected * corrected / (rows * columns));
  return {statistic, chi_square_upper_tail(statistic, 1.0)};
}

ChiSquare homogeneity_chi_square(std::span<const uint64_t> client, std::span<const uint64_t> rest) {
  const size_t bins = std::min(client.size(), rest.size());
  client = client.first(bins);
  rest = rest.first(bins);
  const double n_client = static_cast<double>(sum_of(client));
  const double n_rest = static_cast<double>(sum_of(rest));
  if (n_client == 0.0 || n_rest == 0.0) {
    return {};
  }
  const double n = n_client + n_rest;
  double statistic = 0.0;
  size_t used = 0;
  for (size_t i = 0; i < bins; ++i) {
    const double column = static_cast<double>(client[i]) + static_cast<double>(rest[i]);
    if (column == 0.0) {
      continue;
    }
    ++used;
    const double expected_client = n_client * column / n;
    const double expected_rest = n_rest * column / n;
    const double dc = static_cast<double>(client[i]) - expected_client;
    const double dr = static_cast<double>(rest[i]) - expected_rest;
    statistic += dc * dc / expected_client + dr * dr / expected_rest;
  }
  if (used < 2) {
    return {};
  }
  return {statistic, chi_square_upper_tail(statistic, static_cast<double>(used - 1))};
}

double population_stability_index(std::span<const uint64_t> client,
                                  std::span<const uint64_t> rest) {
  const size_t bins = std::min(client.size(), rest.size());
  client = client.first(bins);
  rest = rest.first(bins);
  const double n_client = static_cast<double>(sum_of(client));
  const double n_rest = static_cast<double>(sum_of(rest));
  if (n_client == 0.0 || n_rest == 0.0) {
    return 0.0;
  }
  // Smoothing only the bins in use keeps the pseudo-counts from swamping a small client when
  // most of the kFeatureBins bins are empty on both sides.
  size_t used = 0;
  for (size_t i = 0; i < bins; ++i) {
    used += (client[i] + rest[i]) > 0 ? 1 : 0;
  }
  const double smoothed_client = n_client + kPsiSmoothing * static_cast<double>(used);
  const double smoothed_rest = n_rest + kPsiSmoothing * static_cast<double>(used);
  double psi = 0.0;
  for (size_t i = 0; i < bins; ++i) {
    if (client[i] + rest[i] == 0) {
      continue;
    }
    const double pc = (static_cast<double>(client[i]) + kPsiSmoothing) / smoothed_client;
    const double pr = (static_cast<double>(rest[i]) + kPsiSmoothing) / smoothed_rest;
    psi += (pc - pr) * std::log(pc / pr);
  }
  return psi;
}

bool GamingMonitor::OldestFirst::operator()(const std::pair<int64_t, ClientState*>& a,
                                            const std::pair<int64_t, ClientState*>& b) const {
  if (a.first != b.first) {
    return a.first < b.first;
  }
  return std::less<ClientState*>{}(a.second, b.second);  // a total order, unlike `<`
}

GamingMonitor::GamingMonitor(GamingOptions options) : options_(options) {
  const GamingOptions defaults;
  options_.window_ms = std::max<int64_t>(options_.window_ms, 1);
  options_.max_clients = std::max<size_t>(options_.max_clients, 1);
  options_.max_requests_per_client = std::max<size_t>(options_.max_requests_per_client, 1);
  options_.min_requests = std::max<uint32_t>(options_.min_requests, 1);
  if (!(options_.psi_threshold > 0.0)) {
    options_.psi_threshold = defaults.psi_threshold;
  }
  if (!(options_.p_value > 0.0 && options_.p_value < 1.0)) {
    options_.p_value = defaults.p_value;
  }
  options_.escalation_cap =
      std::isnan(options_.escalation_cap) ? 0.0 : std::clamp(options_.escalation_cap, 0.0, 1.0);
  kinds_.assign(std::begin(kStandardKinds), std::end(kStandardKinds));
}

void GamingMonitor::record(const RoutingObservation& observation) {
  std::lock_guard lock(mutex_);
  advance_locked(observation.now_ms);
  const std::string id = observation.client.substr(0, kMaxClientIdBytes);
  const auto bin = static_cast<uint8_t>(bin_locked(observation.kind, observation.complexity));

  auto found = by_id_.find(id);
  ClientList::iterator it;
  if (found == by_id_.end()) {
    const size_t named = by_id_.size() - by_id_.count("");
    if (!id.empty() && named >= options_.max_clients) {
      // The least recently seen named client goes; the anonymous one is not a client to evict.
      auto victim = std::prev(clients_.end());
      if (victim->id.empty()) {
        victim = std::prev(victim);
      }
      forget_locked(victim);
    }
    clients_.push_front(ClientState{id, {}, {}});
    it = clients_.begin();
    by_id_.emplace(id, it);
  } else {
    it = found->second;
    clients_.splice(clients_.begin(), clients_, it);  // iterators stay valid
  }

  ClientState& state = *it;
  if (state.window.empty()) {
    by_oldest_.emplace(clock_ms_, &state);
  }
  state.window.push_back({clock_ms_, bin, observation.escalated});
  for (Counts* counts : {&state.counts, &population_}) {
    ++counts->requests;
    counts->escalations += observation.escalated ? 1 : 0;
    ++counts->bins[bin];
  }
  if (state.window.size() > options_.max_requests_per_client) {
    by_oldest_.erase({state.window.front().at_ms, &state});
    drop_front_locked(state);
    by_oldest_.emplace(state.window.front().at_ms, &state);
  }
}

bool GamingMonitor::escalation_capped(const std::string& client, int64_t now_ms) const {
  if (options_.escalation_cap <= 0.0 || client.empty()) {
    return false;
  }
  std::lock_guard lock(mutex_);
  advance_locked(now_ms);
  const auto found = by_id_.find(client.substr(0, kMaxClientIdBytes));
  if (found == by_id_.end()) {
    return false;
  }
  const Counts& counts = found->second->counts;
  if (share(counts.escalations, counts.requests) < options_.escalation_cap) {
    return false;
  }
  return judge_locked(*found->second, /*all_numbers=*/false).capped;
}

GamingMonitor::Report GamingMonitor::report(int64_t now_ms) const {
  std::lock_guard lock(mutex_);
  advance_locked(now_ms);
  Report report;
  report.window_ms = options_.window_ms;
  report.population_requests = population_.requests;
  report.population_escalation_share = share(population_.escalations, population_.requests);
  std::vector<std::pair<double, ClientReport>> flagged;
  for (const ClientState& state : clients_) {
    if (state.id.empty()) {
      continue;
    }
    ++report.clients_tracked;
    if (state.counts.requests < options_.min_requests) {
      continue;  // cannot be flagged: spare the tests
    }
    ClientReport judged = judge_locked(state, /*all_numbers=*/false);
    if (!judged.flagged) {
      continue;
    }
    // Severity: the smallest p-value among the tests that flagged.
    double worst_p = 1.0;
    if (judged.escalation_share > judged.rest_escalation_share &&
        judged.p_value < options_.p_value) {
      worst_p = judged.p_value;
    }
    if (judged.psi > options_.psi_threshold && judged.feature_p_value < options_.p_value) {
      worst_p = std::min(worst_p, judged.feature_p_value);
    }
    flagged.emplace_back(worst_p, std::move(judged));
  }
  std::sort(flagged.begin(), flagged.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) {
      return a.first < b.first;
    }
    if (a.second.psi != b.second.psi) {
      return a.second.psi > b.second.psi;
    }
    return a.second.client < b.second.client;
  });
  report.flagged.reserve(flagged.size());
  for (auto& [p, judged] : flagged) {
    report.flagged.push_back(std::move(judged));
  }
  return report;
}

std::optional<GamingMonitor::ClientReport> GamingMonitor::client(const std::string& client,
                                                                 int64_t now_ms) const {
  if (client.empty()) {
    return std::nullopt;
  }
  std::lock_guard lock(mutex_);
  advance_locked(now_ms);
  const auto found = by_id_.find(client.substr(0, kMaxClientIdBytes));
  if (found == by_id_.end()) {
    return std::nullopt;
  }
  return judge_locked(*found->second, /*all_numbers=*/true);
}

std::vector<GamingMonitor::Interval> GamingMonitor::client_history(const std::string& client,
                                                                   int64_t from_ms, int64_t step_ms,
                                                                   size_t steps,
                                                                   int64_t now_ms) const {
  std::vector<Interval> out(steps);
  if (client.empty() || step_ms <= 0 || steps == 0) {
    return out;
  }
  std::lock_guard lock(mutex_);
  advance_locked(now_ms);
  const auto found = by_id_.find(client.substr(0, kMaxClientIdBytes));
  if (found == by_id_.end()) {
    return out;
  }
  for (const Observation& seen : found->second->window) {
    if (seen.at_ms < from_ms) {
      continue;
    }
    const auto step = static_cast<uint64_t>(seen.at_ms - from_ms) / static_cast<uint64_t>(step_ms);
    if (step >= steps) {
      continue;
    }
    ++out[step].requests;
    if (seen.escalated) {
      ++out[step].escalations;
    }
  }
  return out;
}

void GamingMonitor::advance_locked(int64_t now_ms) const {
  if (!clock_set_ || now_ms > clock_ms_) {
    clock_ms_ = now_ms;
    clock_set_ = true;
  }
  if (clock_ms_ < std::numeric_limits<int64_t>::min() + options_.window_ms) {
    return;  // nothing can be a whole window old yet
  }
  // Observations at or before the cutoff are window_ms old or older.
  const int64_t cutoff = clock_ms_ - options_.window_ms;
  while (!by_oldest_.empty() && by_oldest_.begin()->first <= cutoff) {
    ClientState* state = by_oldest_.begin()->second;
    by_oldest_.erase(by_oldest_.begin());
    while (!state->window.empty() && state->window.front().at_ms <= cutoff) {
      drop_front_locked(*state);
    }
    if (state->window.empty()) {
      forget_locked(by_id_.at(state->id));
    } else {
      by_oldest_.emplace(state->window.front().at_ms, state);
    }
  }
}

void GamingMonitor::drop_front_locked(ClientState& state) const {
  const Observation& oldest = state.window.front();
  for (Counts* counts : {&state.counts, &population_}) {
    --counts->requests;
    counts->escalations -= oldest.escalated ? 1 : 0;
    --counts->bins[oldest.bin];
  }
  state.window.pop_front();
}

void GamingMonitor::forget_locked(ClientList::iterator it) const {
  if (!it->window.empty()) {
    by_oldest_.erase({it->window.front().at_ms, &*it});
  }
  population_.requests -= it->counts.requests;
  population_.escalations -= it->counts.escalations;
  for (size_t i = 0; i < kFeatureBins; ++i) {
    population_.bins[i] -= it->counts.bins[i];
  }
  by_id_.erase(it->id);
  clients_.erase(it);
}

size_t GamingMonitor::bin_locked(std::string_view kind, double complexity) {
  size_t slot = kOtherKind;
  if (!kind.empty() && kind.size() <= kMaxKindBytes && kind != "other") {
    const auto known = std::find(kinds_.begin(), kinds_.end(), kind);
    if (known != kinds_.end()) {
      slot = static_cast<size_t>(known - kinds_.begin());
    } else if (kinds_.size() < kMaxKinds) {
      slot = kinds_.size();
      kinds_.emplace_back(kind);
    }
  }
  return slot * kComplexityBins + complexity_quintile(complexity);
}

GamingMonitor::ClientReport GamingMonitor::judge_locked(const ClientState& state,
                                                        bool all_numbers) const {
  const Counts& own = state.counts;
  // Leave-one-out: the rest is the population without this client. The population is the sum
  // of all windows, so it never holds less than one of them.
  Counts rest;
  rest.requests = population_.requests - own.requests;
  rest.escalations = population_.escalations - own.escalations;
  for (size_t i = 0; i < kFeatureBins; ++i) {
    rest.bins[i] = population_.bins[i] - own.bins[i];
  }

  ClientReport out;
  out.client = state.id;
  out.requests = own.requests;
  out.escalations = own.escalations;
  out.escalation_share = share(own.escalations, own.requests);
  out.rest_escalation_share = share(rest.escalations, rest.requests);
  const ChiSquare escalation = yates_chi_square(own.escalations, own.requests - own.escalations,
                                                rest.escalations, rest.requests - rest.escalations);
  out.chi_square = escalation.statistic;
  out.p_value = escalation.p_value;
  out.psi = population_stability_index(own.bins, rest.bins);
  // The homogeneity test (an incomplete gamma function) is the dearest part; it can only
  // matter once the PSI is over the threshold.
  if (all_numbers || out.psi > options_.psi_threshold) {
    const ChiSquare features = homogeneity_chi_square(own.bins, rest.bins);
    out.feature_chi_square = features.statistic;
    out.feature_p_value = features.p_value;
  }
  out.judged = !state.id.empty() && own.requests >= options_.min_requests &&
               rest.requests >= options_.min_population;
  if (!out.judged) {
    return out;
  }
  if (out.escalation_share > out.rest_escalation_share && out.p_value < options_.p_value) {
    out.reasons.push_back(format(
        "escalation_share: %.3f of %llu requests vs %.3f for the rest (chi-square %.4g, p %.3g "
        "< %g)",
        out.escalation_share, static_cast<unsigned long long>(out.requests),
        out.rest_escalation_share, out.chi_square, out.p_value, options_.p_value));
  }
  if (out.psi > options_.psi_threshold && out.feature_p_value < options_.p_value) {
    out.reasons.push_back(
        format("feature_shift: psi %.3f > %g over (kind, complexity quintile) bins (chi-square "
               "%.4g, p %.3g < %g)",
               out.psi, options_.psi_threshold, out.feature_chi_square, out.feature_p_value,
               options_.p_value));
  }
  out.flagged = !out.reasons.empty();
  out.capped = out.flagged && options_.escalation_cap > 0.0 &&
               out.escalation_share >= options_.escalation_cap;
  return out;
}

}  // namespace tandem::telemetry
