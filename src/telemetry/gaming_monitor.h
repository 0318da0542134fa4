#pragma once
// Routing gaming: clients that learn to phrase prompts so the router sends them to the
// expensive cloud model. Each client's recent routing is compared with the REST of the
// population (leave-one-out: a big client must not hide inside its own traffic) on two signals:
//
//   escalation share  The client's cloud share against the rest's: a 2x2 chi-square test
//                     (client/rest x cloud/edge) with Yates' correction, 1 df, so
//                     p = erfc(sqrt(x / 2)). One-sided: only a share HIGHER than the rest's
//                     flags; a client that stays on the edge costs nothing.
//   feature shift     Where the client's prompts land: the joint distribution over
//                     (query kind, complexity quintile) bins, compared by the population
//                     stability index PSI = sum (p_c - p_r) * ln(p_c / p_r) (a symmetric KL
//                     divergence), each side smoothed additively by kPsiSmoothing per bin so an
//                     empty bin stays finite. A gamer who pads prompts to look hard piles into
//                     the top quintile while its escalation share may still look ordinary.
//
// Each signal needs an effect and evidence. The escalation share must be higher AND
// significant (p < p_value). The PSI must exceed psi_threshold AND the same bins must differ
// significantly (Pearson chi-square homogeneity test of the 2 x bins table, p < p_value):
// the PSI of a small sample is biased upward by about (bins - 1) / requests, so an honest
// client with 30 requests spread over 25 bins scores well above 0.25 by chance alone.
//
// The window slides: each client keeps a deque of its observations younger than window_ms;
// the population aggregate is the sum of all those windows, kept incrementally (added on
// record, subtracted on expiry, trimming and eviction), and an index of clients by their oldest
// observation finds expiries without a scan. So record() is O(log clients) amortised and
// report() O(clients x bins), never O(requests).
//
// Memory is bounded whatever the clients do: at most max_clients named clients (the least
// recently seen is forgotten, its observations leaving the population with it) plus the
// anonymous one, each with at most max_requests_per_client observations of 16 bytes and about
// 1 KiB of counters; client ids are kept to their first kMaxClientIdBytes bytes; the kind table
// holds at most kMaxKinds names.
//
// The cap lets go by itself: a capped client that the gateway keeps on the edge falls back
// under the cap (or out of significance) and may escalate again, so its share hovers near the
// cap instead of being cut off.
//
// Limits: the reference is the rest of the population, so when one source dominates it (a huge
// tenant, or anonymous traffic) with an unusual mix, ordinary clients look shifted against it.
// The kind table is first come, never forgotten: once it is full, new kinds share "other".
//
// Time is injected (now_ms) and never goes backwards: an earlier now_ms than the latest seen
// is taken as the latest, so a late timestamp cannot disorder the window.
//
// Thread-safety: every method may be called from any thread; one mutex guards all state. The
// const methods also drop expired observations (what the window holds is a function of time),
// which is why that state is mutable.

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tandem::telemetry {

// Named query kinds tracked: the five standard ones (multiple_choice, math, code, factoid,
// open) first, then the first other distinct kinds seen; any further kind, an empty kind, the
// literal "other" and kinds longer than kMaxKindBytes share the "other" bin.
inline constexpr size_t kMaxKinds = 16;
inline constexpr size_t kMaxKindBytes = 64;
inline constexpr size_t kComplexityBins = 5;  // quintiles of P(cloud needed)
inline constexpr size_t kFeatureBins = (kMaxKinds + 1) * kComplexityBins;
// Pseudo-count added to every compared bin before the PSI (Jeffreys' prior, as in the
// Krichevsky-Trofimov estimator): small enough not to mask a real shift, large enough that an
// empty bin does not send ln(p_c / p_r) to infinity.
inline constexpr double kPsiSmoothing = 0.5;
// Longer client ids are kept by their first this many bytes.
inline constexpr size_t kMaxClientIdBytes = 256;

struct GamingOptions {
  int64_t window_ms = 3600000;
  // A client is judged only with this many requests in the window...
  uint32_t min_requests = 30;
  // ...nor before the rest of the population has this many.
  uint32_t min_population = 100;
  // Population stability index of the client's prompt-feature distribution vs the rest.
  double psi_threshold = 0.25;
  // Significance of both tests.
  double p_value = 0.001;
  // 0: flag only; else a flagged client may escalate at most this share of its requests in the
  // window.
  double escalation_cap = 0.0;
  // Least recently seen clients are forgotten beyond this.
  size_t max_clients = 10000;
  // A client's oldest observations are dropped beyond this.
  size_t max_requests_per_client = 10000;

  // Empty when valid; else a message naming the first offending field as spelled here.
  std::string validate() const;
};

struct RoutingObservation {
  std::string client;      // "" is anonymous: counts in the population, never flagged
  bool escalated = false;  // the cloud answered (routed there or escalated)
  // Query kind: multiple_choice, math, code, factoid, open; other strings are binned as given,
  // bounded as kMaxKinds says.
  std::string kind;
  double complexity = 0.0;  // the ingress classifier's P(cloud needed), 0..1
  int64_t now_ms = 0;
};

// The complexity quintile, floor(5 * complexity) in 0..4; values outside [0, 1] clamp and NaN
// counts as 0.
size_t complexity_quintile(double complexity);

struct ChiSquare {
  double statistic = 0.0;
  double p_value = 1.0;
};

// Upper tail P(X >= statistic) of the chi-square distribution with `df` degrees of freedom
// (df > 0); 1 for a statistic <= 0, NaN or an invalid df.
double chi_square_upper_tail(double statistic, double df);

// Yates-corrected chi-square of the 2x2 table [[a, b], [c, d]] (rows: client, rest; columns:
// escalated, not): N (max(0, |ad - bc| - N/2))^2 / ((a+b)(c+d)(a+c)(b+d)), 1 df. Statistic 0
// and p 1 when a row or column is empty (nothing to compare).
ChiSquare yates_chi_square(uint64_t a, uint64_t b, uint64_t c, uint64_t d);

// Pearson chi-square homogeneity test of two count vectors (a 2 x bins table) over the bins
// where either has a count; df = those bins - 1. Statistic 0 and p 1 with fewer than two such
// bins or an empty side. Vectors of unequal length are compared over the shorter.
ChiSquare homogeneity_chi_square(std::span<const uint64_t> client, std::span<const uint64_t> rest);

// PSI of `client` against `rest` over the bins where either has a count, each side smoothed:
// p = (n + kPsiSmoothing) / (N + kPsiSmoothing * bins). 0 when either side is empty. Vectors of
// unequal length are compared over the shorter.
double population_stability_index(std::span<const uint64_t> client, std::span<const uint64_t> rest);

class GamingMonitor {
 public:
  // Options are expected to have passed validate(); out-of-range values are clamped to the
  // nearest valid one (NaN to the default) so a bad config cannot make the monitor misbehave.
  explicit GamingMonitor(GamingOptions options);

  // Counts one routed request. Never fails: odd kinds, complexities, ids and times are binned,
  // clamped or truncated as documented above.
  void record(const RoutingObservation& observation);

  // On the request path: true when a cap is set, the client's escalation share in the window
  // is already at or above it, and the client is flagged. False for the anonymous client and
  // unknown ones. Cheap: the share is checked first, the tests (O(bins)) only when it is over.
  bool escalation_capped(const std::string& client, int64_t now_ms) const;

  struct ClientReport {
    std::string client;
    uint64_t requests = 0;
    uint64_t escalations = 0;
    double escalation_share = 0.0;       // escalations / requests
    double rest_escalation_share = 0.0;  // the same for everyone else; 0 when they have none
    double chi_square = 0.0;             // Yates 2x2 escalation test
    double p_value = 1.0;
    double psi = 0.0;
    double feature_chi_square = 0.0;  // homogeneity test backing the PSI
    double feature_p_value = 1.0;
    // Enough requests (min_requests) and rest (min_population) to be judged; the numbers above
    // are filled in either way.
    bool judged = false;
    bool flagged = false;
    bool capped = false;  // flagged, a cap set and the share at or above it
    // "escalation_share: ..." and/or "feature_shift: ...", with the numbers behind them.
    std::vector<std::string> reasons;
  };

  struct Report {
    int64_t window_ms = 0;
    uint64_t population_requests = 0;  // every request in the window, anonymous ones included
    double population_escalation_share = 0.0;
    size_t clients_tracked = 0;  // named clients with requests in the window
    // Worst first: smallest p-value among the tests that flagged, then larger PSI, then id.
    std::vector<ClientReport> flagged;
  };

  // The flagged clients at `now_ms`. O(clients x bins) under the lock (about 10 ms for 10000
  // clients): for a periodic or admin caller, not for every request.
  Report report(int64_t now_ms) const;

  // One client's numbers at `now_ms`; nullopt for the anonymous client and for a client with
  // nothing in the window (never seen, expired or forgotten).
  std::optional<ClientReport> client(const std::string& client, int64_t now_ms) const;

  // One client's requests and escalations in the window at `now_ms`, counted per interval
  // [from_ms + i * step_ms, from_ms + (i + 1) * step_ms) for i < steps (the dashboard's plot of
  // a flagged client). Observations outside every interval are left out; an unknown or
  // anonymous client gets all zeros. O(the client's observations) under the lock.
  struct Interval {
    uint32_t requests = 0;
    uint32_t escalations = 0;
  };
  std::vector<Interval> client_history(const std::string& client, int64_t from_ms, int64_t step_ms,
                                       size_t steps, int64_t now_ms) const;

 private:
  struct Counts {
    uint64_t requests = 0;
    uint64_t escalations = 0;
    std::array<uint64_t, kFeatureBins> bins{};
  };
  struct Observation {
    int64_t at_ms = 0;
    uint8_t bin = 0;
    bool escalated = false;
  };
  struct ClientState {
    std::string id;
    std::deque<Observation> window;  // oldest first
    Counts counts;
  };
  using ClientList = std::list<ClientState>;  // most recently seen first
  // (oldest observation time, client): the order expiry walks in.
  struct OldestFirst {
    bool operator()(const std::pair<int64_t, ClientState*>& a,
                    const std::pair<int64_t, ClientState*>& b) const;
  };

  void advance_locked(int64_t now_ms) const;
  void drop_front_locked(ClientState& state) const;
  void forget_locked(ClientList::iterator it) const;
  size_t bin_locked(std::string_view kind, double complexity);
  // `all_numbers` false skips the feature test where it cannot flag (for report() and the
  // request path, which only need the verdict).
  ClientReport judge_locked(const ClientState& state, bool all_numbers) const;

  GamingOptions options_;
  mutable std::mutex mutex_;
  mutable int64_t clock_ms_ = 0;    // guarded by mutex_: the latest time seen
  mutable bool clock_set_ = false;  // guarded by mutex_
  mutable ClientList clients_;      // guarded by mutex_
  mutable std::unordered_map<std::string, ClientList::iterator> by_id_;        // guarded by mutex_
  mutable std::set<std::pair<int64_t, ClientState*>, OldestFirst> by_oldest_;  // by mutex_
  mutable Counts population_;                                                  // guarded by mutex_
  std::vector<std::string> kinds_;                                             // guarded by mutex_
};

}  // namespace tandem::telemetry
