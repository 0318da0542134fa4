#pragma once
// Prometheus metrics: counters, gauges, histograms and scrape-time gauges, grouped in a
// registry that renders the text exposition format 0.0.4 for GET /metrics.
//
// The request path holds references to its metrics and updates them lock-free (one atomic
// read-modify-write per update); only registration, scrapes and read-backs take the registry
// lock. Misuse (a bad name, one name with two types) is a programmer error: it asserts in
// debug builds and, in release builds, hands out a "dropped" metric that works but is never
// rendered, so a mistake in a rarely used metric cannot take the gateway down.
//
// Thread-safety: every method of every class here may be called from any thread.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tandem::telemetry {

// (label name, label value) pairs. Rendered in the order the series was first created with;
// a series is identified by the set of pairs, so {a,b} and {b,a} name the same series.
using Labels = std::vector<std::pair<std::string, std::string>>;

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool valid_metric_name(std::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved for Prometheus itself).
bool valid_label_name(std::string_view name);
// Histogram bucket upper bounds: finite and strictly increasing (empty is valid: only +Inf).
bool valid_bucket_bounds(const std::vector<double>& upper_bounds);

// `count` bounds start, start*factor, start*factor^2, ... Requires start > 0, factor > 1 and
// count >= 1 (asserted); in release builds a bad argument gives an empty vector.
std::vector<double> exponential_buckets(double start, double factor, size_t count);

// Request latencies in seconds, from 5 ms (a cache hit) to 60 s (a long cloud generation).
inline constexpr std::array<double, 14> kLatencyBucketsSeconds = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60};
std::vector<double> latency_buckets_seconds();

// A value that only goes up (requests served, tokens generated). Lock-free.
class Counter {
 public:
  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  // Adds `v`. Negative, NaN and infinite increments are ignored: counters only go up, and one
  // non-finite value would pin the counter at NaN/Inf for the life of the process.
  void add(double v = 1.0);
  double value() const;

 private:
  std::atomic<double> value_{0.0};
};

// A value that goes up and down (requests in flight, queue depth). Lock-free. Any double is
// accepted, NaN included (rendered as NaN).
class Gauge {
 public:
  Gauge() = default;
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void set(double v);
  void add(double v);
  double value() const;

 private:
  std::atomic<double> value_{0.0};
};

// Counts of observations in fixed buckets, plus their sum. Lock-free: observe() is one binary
// search and two atomic updates.
class Histogram {
 public:
  struct Snapshot {
    std::vector<double> upper_bounds;
    // One per upper bound, then the +Inf bucket last (== count). Bucket i counts the
    // observations <= upper_bounds[i]: a bound is inclusive, as Prometheus' `le` says.
    std::vector<uint64_t> cumulative_counts;
    double sum = 0;
    uint64_t count = 0;
  };

  // `upper_bounds` must satisfy valid_bucket_bounds() (asserted); in release builds invalid
  // bounds are replaced by none, leaving only the +Inf bucket.
  explicit Histogram(std::vector<double> upper_bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // Records `v`. Non-finite values are ignored (an Inf would pin _sum at Inf for good).
  void observe(double v);

  // The buckets are read one by one without stopping observe(), so under concurrent updates
  // the snapshot may include part of an observation: `count` always equals the +Inf bucket,
  // but `sum` may be ahead or behind by the observations in flight.
  Snapshot snapshot() const;

  const std::vector<double>& upper_bounds() const { return upper_bounds_; }

 private:
  std::vector<double> upper_bounds_;
  std::vector<std::atomic<uint64_t>> bucket_counts_;  // not cumulative; +Inf bucket last
  std::atomic<double> sum_{0.0};
};

class MetricsRegistry {
 public:
  // One scrape-time gauge family's samples: each series' labels and value.
  using Collect = std::function<std::vector<std::pair<Labels, double>>()>;

  MetricsRegistry();
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // The series `name`{labels}, created at first use. The same name and label set always give
  // the same object, and references stay valid for the registry's lifetime: look a metric up
  // once and keep the reference. The first registration's `help` is the family's; later
  // ones' is ignored.
  //
  // Programmer errors (asserted; in release a dropped metric that is never rendered):
  // an invalid metric or label name, a label name twice, `name` already registered with
  // another type, or a name that collides with a histogram's _bucket/_sum/_count series.
  Counter& counter(std::string_view name, std::string_view help, const Labels& labels = {});
  Gauge& gauge(std::string_view name, std::string_view help, const Labels& labels = {});
  // As counter(), and also programmer errors: bounds that fail valid_bucket_bounds(), bounds
  // other than those the family was first registered with, and a label named "le".
  Histogram& histogram(std::string_view name, std::string_view help,
                       std::vector<double> upper_bounds, const Labels& labels = {});

  // A gauge family whose samples are produced by `collect` at each render(), for values that
  // live elsewhere (queue depth, circuit states). `collect` runs without the registry lock,
  // so it may read this registry's metrics; it may run on several scraping threads at once,
  // and must be thread-safe itself. Samples with an invalid or duplicate label name are
  // skipped; an exception from `collect` renders the family without samples. Registering
  // a name that exists is a programmer error (asserted; ignored in release).
  void gauge_function(std::string_view name, std::string_view help, Collect collect);
  // As gauge_function(), for a total that only grows and is kept elsewhere (an engine's token
  // counts): rendered with TYPE counter, so rate() applies.
  void counter_function(std::string_view name, std::string_view help, Collect collect);

  // The text exposition (format 0.0.4): families in registration order, series in creation
  // order. A family without samples (a gauge function that returned none) is left out.
  std::string render() const;

  // The value of counter or gauge `name`{labels} (labels in any order); nullopt when no such
  // series exists. Gauge functions are not read.
  std::optional<double> value(std::string_view name, const Labels& labels = {}) const;
  std::optional<Histogram::Snapshot> histogram_snapshot(std::string_view name,
                                                        const Labels& labels = {}) const;
  // The sum over the series of counter or gauge family `name` whose labels include every pair
  // of `label_filter` (all of them for an empty filter); 0 when there are none.
  double sum(std::string_view name, const Labels& label_filter = {}) const;

 private:
  enum class Type { kCounter, kGauge, kHistogram, kGaugeFunction, kCounterFunction };
  void function_family(std::string_view name, std::string_view help, Type type, Collect collect);
  struct Series;
  struct Family;

  // The series, created if needed; nullptr (after asserting) on a programmer error.
  // `upper_bounds` (histograms only, else nullptr) may be moved from.
  Series* series_locked(std::string_view name, std::string_view help, Type type,
                        const Labels& labels, std::vector<double>* upper_bounds);
  Family* new_family_locked(std::string_view name, std::string_view help, Type type,
                            std::vector<double> upper_bounds);
  const Series* find_series_locked(std::string_view name, const Labels& labels) const;
  bool collides_with_histogram_locked(std::string_view name, Type type) const;

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Family>> families_;        // guarded by mutex_
  std::map<std::string, Family*, std::less<>> by_name_;  // guarded by mutex_
  // Handed out on programmer errors; updated like any metric, never rendered or read back.
  Counter dropped_counter_;
  Gauge dropped_gauge_;
  Histogram dropped_histogram_{std::vector<double>{}};
};

}  // namespace tandem::telemetry
