#include "telemetry/metrics.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <set>
#include <variant>

#include "common/log.h"

namespace tandem::telemetry {

// The request path's updates are single atomic instructions only if this holds; a lock-based
// std::atomic<double> would quietly serialise every request on a hidden mutex.
static_assert(std::atomic<double>::is_always_lock_free);

namespace {

bool name_start_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool name_char(char c) {
  return name_start_char(c) || (c >= '0' && c <= '9');
}

// Logs before asserting so that a release build, where the assert is compiled out, still says
// which metric was dropped and why.
void report_misuse(std::string_view name, const char* reason) {
  log_event(LogLevel::kError, "telemetry", "metric_misuse",
            {{"metric", std::string(name)}, {"reason", reason}});
  assert(false && "metric misuse: see the metric_misuse log line");
}

// Series are identified by their label set, whatever order the caller lists it in.
Labels sorted_labels(const Labels& labels) {
  Labels key = labels;
  std::sort(key.begin(), key.end());
  return key;
}

// Why a (sorted) label set cannot be used, or nullptr.
const char* label_set_error(const Labels& sorted, bool histogram) {
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (!valid_label_name(sorted[i].first)) {
      return "invalid label name";
    }
    if (i > 0 && sorted[i].first == sorted[i - 1].first) {
      return "label name given twice";
    }
    if (histogram && sorted[i].first == "le") {
      return "label \"le\" is reserved for histogram buckets";
    }
  }
  return nullptr;
}

// Numbers as Prometheus parses them (Go's ParseFloat): whole values that a double holds exactly
// as integers print without a decimal point, others in their shortest round-trip form.
void append_number(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  constexpr double kTwoTo53 = 9007199254740992.0;
  if (v == std::trunc(v) && std::fabs(v) < kTwoTo53) {
    out += std::to_string(static_cast<int64_t>(v));  // -0.0 becomes "0"
    return;
  }
  char buf[32];  // the longest shortest form of a double is 24 characters
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  assert(ec == std::errc());
  out.append(buf, end);
}

// HELP text escapes backslash and newline; label values also escape the double quote.
void append_escaped(std::string& out, std::string_view text, bool is_label_value) {
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && is_label_value) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

void append_header(std::string& out, std::string_view name, std::string_view help,
                   std::string_view type) {
  out += "# HELP ";
  out += name;
  out += ' ';
  append_escaped(out, help, false);
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

// `name``suffix`{labels[,le="<le>"]} value, the le pair only when `le` is not empty.
void append_sample(std::string& out, std::string_view name, std::string_view suffix,
                   const Labels& labels, std::string_view le, double value) {
  out += name;
  out += suffix;
  if (!labels.empty() || !le.empty()) {
    char separator = '{';
    for (const auto& [label, label_value] : labels) {
      out += separator;
      out += label;
      out += "=\"";
      append_escaped(out, label_value, true);
      out += '"';
      separator = ',';
    }
    if (!le.empty()) {
      out += separator;
      out += "le=\"";
      out += le;
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  append_number(out, value);
  out += '\n';
}

void append_histogram(std::string& out, std::string_view name, const Labels& labels,
                      const Histogram::Snapshot& snapshot) {
  std::string le;
  for (size_t i = 0; i < snapshot.upper_bounds.size(); ++i) {
    le.clear();
    append_number(le, snapshot.upper_bounds[i]);
    append_sample(out, name, "_bucket", labels, le,
                  static_cast<double>(snapshot.cumulative_counts[i]));
  }
  append_sample(out, name, "_bucket", labels, "+Inf", static_cast<double>(snapshot.count));
  append_sample(out, name, "_sum", labels, "", snapshot.sum);
  append_sample(out, name, "_count", labels, "", static_cast<double>(snapshot.count));
}

bool includes_all(const Labels& labels, const Labels& filter) {
  return std::all_of(filter.begin(), filter.end(), [&](const auto& pair) {
    return std::find(labels.begin(), labels.end(), pair) != labels.end();
  });
}

// Invalid bounds become none (only +Inf) in release builds rather than an unsorted bucket search.
std::vector<double> checked_bounds(std::vector<double> upper_bounds) {
  const bool valid = valid_bucket_bounds(upper_bounds);
  assert(valid);
  if (!valid) {
    upper_bounds.clear();
  }
  return upper_bounds;
}

}  // namespace

bool valid_metric_name(std::string_view name) {
  if (name.empty() || !(name_start_char(name[0]) || name[0] == ':')) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) { return name_char(c) || c == ':'; });
}

bool valid_label_name(std::string_view name) {
  if (name.empty() || !name_start_char(name[0]) || name.starts_with("__")) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), name_char);
}

bool valid_bucket_bounds(const std::vector<double>& upper_bounds) {
  for (size_t i = 0; i < upper_bounds.size(); ++i) {
    if (!std::isfinite(upper_bounds[i]) || (i > 0 && upper_bounds[i] <= upper_bounds[i - 1])) {
      return false;
    }
  }
  return true;
}

std::vector<double> exponential_buckets(double start, double factor, size_t count) {
  const bool valid =
      std::isfinite(start) && start > 0 && std::isfinite(factor) && factor > 1 && count >= 1;
  assert(valid);
  if (!valid) {
    return {};
  }
  std::vector<double> bounds;
  bounds.reserve(count);
  double bound = start;
  // Stops early rather than emit an infinite or repeated bound (overflow, or a factor too
  // close to 1 for a subnormal start).
  while (bounds.size() < count && std::isfinite(bound) &&
         (bounds.empty() || bound > bounds.back())) {
    bounds.push_back(bound);
    bound *= factor;
  }
  return bounds;
}

std::vector<double> latency_buckets_seconds() {
  return {kLatencyBucketsSeconds.begin(), kLatencyBucketsSeconds.end()};
}

void Counter::add(double v) {
  if (!std::isfinite(v) || v < 0) {
    return;
  }
  value_.fetch_add(v, std::memory_order_relaxed);
}

double Counter::value() const {
  return value_.load(std::memory_order_relaxed);
}

void Gauge::set(double v) {
  value_.store(v, std::memory_order_relaxed);
}
void Gauge::add(double v) {
  value_.fetch_add(v, std::memory_order_relaxed);
}
double Gauge::value() const {
  return value_.load(std::memory_order_relaxed);
}

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(checked_bounds(std::move(upper_bounds))),
      bucket_counts_(upper_bounds_.size() + 1) {}

void Histogram::observe(double v) {
  if (!std::isfinite(v)) {
    return;
  }
  // The first bound >= v: a value equal to a bound belongs to that bound's bucket.
  const auto bucket = std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), v);
  bucket_counts_[static_cast<size_t>(bucket - upper_bounds_.begin())].fetch_add(
      1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot snapshot;
  snapshot.upper_bounds = upper_bounds_;
  snapshot.cumulative_counts.reserve(bucket_counts_.size());
  uint64_t running = 0;
  for (const auto& bucket : bucket_counts_) {
    running += bucket.load(std::memory_order_relaxed);
    snapshot.cumulative_counts.push_back(running);
  }
  snapshot.count = running;
  snapshot.sum = sum_.load(std::memory_order_relaxed);
  return snapshot;
}

struct MetricsRegistry::Series {
  template <typename Metric, typename... Args>
  Series(Labels labels_in, std::in_place_type_t<Metric> type, Args&&... args)
      : labels(std::move(labels_in)), metric(type, std::forward<Args>(args)...) {}

  const Labels labels;  // as first given: the order they render in
  std::variant<Counter, Gauge, Histogram> metric;
};

// name, help, type, upper_bounds and collect never change once the family is registered, so
// render() reads them without the lock; series and by_labels are guarded by mutex_.
struct MetricsRegistry::Family {
  std::string name;
  std::string help;
  Type type = Type::kCounter;
  std::vector<double> upper_bounds;             // histograms
  Collect collect;                              // gauge functions
  std::vector<std::unique_ptr<Series>> series;  // creation order
  std::map<Labels, Series*> by_labels;          // key: the labels sorted
};

MetricsRegistry::MetricsRegistry() = default;
MetricsRegistry::~MetricsRegistry() = default;

bool MetricsRegistry::collides_with_histogram_locked(std::string_view name, Type type) const {
  for (const std::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (type == Type::kHistogram && by_name_.contains(std::string(name) + std::string(suffix))) {
      return true;
    }
    if (name.ends_with(suffix)) {
      const auto stem = by_name_.find(name.substr(0, name.size() - suffix.size()));
      if (stem != by_name_.end() && stem->second->type == Type::kHistogram) {
        return true;
      }
    }
  }
  return false;
}

MetricsRegistry::Family* MetricsRegistry::new_family_locked(std::string_view name,
                                                            std::string_view help, Type type,
                                                            std::vector<double> upper_bounds) {
  auto family = std::make_unique<Family>();
  family->name = std::string(name);
  family->help = std::string(help);
  family->type = type;
  family->upper_bounds = std::move(upper_bounds);
  Family* raw = family.get();
  families_.push_back(std::move(family));
  by_name_.emplace(raw->name, raw);
  return raw;
}

MetricsRegistry::Series* MetricsRegistry::series_locked(std::string_view name,
                                                        std::string_view help, Type type,
                                                        const Labels& labels,
                                                        std::vector<double>* upper_bounds) {
  if (!valid_metric_name(name)) {
    report_misuse(name, "invalid metric name");
    return nullptr;
  }
  Labels key = sorted_labels(labels);
  if (const char* error = label_set_error(key, type == Type::kHistogram)) {
    report_misuse(name, error);
    return nullptr;
  }
  Family* family = nullptr;
  if (const auto it = by_name_.find(name); it != by_name_.end()) {
    family = it->second;
    if (family->type != type) {
      report_misuse(name, "already registered with another type");
      return nullptr;
    }
    if (upper_bounds != nullptr && *upper_bounds != family->upper_bounds) {
      report_misuse(name, "bucket bounds differ from the family's");
      return nullptr;
    }
  } else {
    if (upper_bounds != nullptr && !valid_bucket_bounds(*upper_bounds)) {
      report_misuse(name, "bucket bounds must be finite and strictly increasing");
      return nullptr;
    }
    if (collides_with_histogram_locked(name, type)) {
      report_misuse(name, "collides with a histogram's _bucket/_sum/_count series");
      return nullptr;
    }
    // Moves the caller's bounds in: histogram() took them by value for this.
    family = new_family_locked(
        name, help, type,
        upper_bounds != nullptr ? std::move(*upper_bounds) : std::vector<double>{});
  }

  if (const auto it = family->by_labels.find(key); it != family->by_labels.end()) {
    return it->second;
  }
  std::unique_ptr<Series> series;
  switch (type) {
    case Type::kCounter:
      series = std::make_unique<Series>(labels, std::in_place_type<Counter>);
      break;
    case Type::kGauge:
      series = std::make_unique<Series>(labels, std::in_place_type<Gauge>);
      break;
    case Type::kHistogram:
      series =
          std::make_unique<Series>(labels, std::in_place_type<Histogram>, family->upper_bounds);
      break;
    case Type::kGaugeFunction:
    case Type::kCounterFunction:
      return nullptr;  // gauge_function() and counter_function() register those, without series
  }
  Series* raw = series.get();
  family->series.push_back(std::move(series));
  family->by_labels.emplace(std::move(key), raw);
  return raw;
}

Counter& MetricsRegistry::counter(std::string_view name, std::string_view help,
                                  const Labels& labels) {
  std::lock_guard lock(mutex_);
  Series* series = series_locked(name, help, Type::kCounter, labels, nullptr);
  return series ? std::get<Counter>(series->metric) : dropped_counter_;
}

Gauge& MetricsRegistry::gauge(std::string_view name, std::string_view help, const Labels& labels) {
  std::lock_guard lock(mutex_);
  Series* series = series_locked(name, help, Type::kGauge, labels, nullptr);
  return series ? std::get<Gauge>(series->metric) : dropped_gauge_;
}

Histogram& MetricsRegistry::histogram(std::string_view name, std::string_view help,
                                      std::vector<double> upper_bounds, const Labels& labels) {
  std::lock_guard lock(mutex_);
  Series* series = series_locked(name, help, Type::kHistogram, labels, &upper_bounds);
  return series ? std::get<Histogram>(series->metric) : dropped_histogram_;
}

void MetricsRegistry::gauge_function(std::string_view name, std::string_view help,
                                     Collect collect) {
  function_family(name, help, Type::kGaugeFunction, std::move(collect));
}

void MetricsRegistry::counter_function(std::string_view name, std::string_view help,
                                       Collect collect) {
  function_family(name, help, Type::kCounterFunction, std::move(collect));
}

void MetricsRegistry::function_family(std::string_view name, std::string_view help, Type type,
                                      Collect collect) {
  std::lock_guard lock(mutex_);
  if (!valid_metric_name(name)) {
    report_misuse(name, "invalid metric name");
  } else if (by_name_.contains(name)) {
    report_misuse(name, "already registered");
  } else if (collides_with_histogram_locked(name, type)) {
    report_misuse(name, "collides with a histogram's _bucket/_sum/_count series");
  } else if (!collect) {
    report_misuse(name, "empty collect function");
  } else {
    new_family_locked(name, help, type, {})->collect = std::move(collect);
  }
}

std::string MetricsRegistry::render() const {
  // Families and series are never removed, so pointers copied under the lock stay valid; the
  // values are read (and gauge functions called) after releasing it, so a scrape neither
  // blocks registration for long nor deadlocks on a `collect` that reads this registry.
  struct View {
    const Family* family;
    std::vector<const Series*> series;
  };
  std::vector<View> views;
  {
    std::lock_guard lock(mutex_);
    views.reserve(families_.size());
    for (const auto& family : families_) {
      View& view = views.emplace_back(View{family.get(), {}});
      view.series.reserve(family->series.size());
      for (const auto& series : family->series) {
        view.series.push_back(series.get());
      }
    }
  }

  std::string out;
  for (const View& view : views) {
    const Family& family = *view.family;
    if (family.type == Type::kGaugeFunction || family.type == Type::kCounterFunction) {
      std::vector<std::pair<Labels, double>> samples;
      try {
        samples = family.collect();
      } catch (...) {
        log_event(LogLevel::kWarn, "telemetry", "gauge_function_failed", {{"metric", family.name}});
      }
      std::set<Labels> seen;
      std::string lines;
      for (const auto& [labels, value] : samples) {
        Labels key = sorted_labels(labels);
        if (label_set_error(key, false) == nullptr && seen.insert(std::move(key)).second) {
          append_sample(lines, family.name, "", labels, "", value);
        }
      }
      if (!lines.empty()) {
        append_header(out, family.name, family.help,
                      family.type == Type::kCounterFunction ? "counter" : "gauge");
        out += lines;
      }
      continue;
    }
    if (view.series.empty()) {
      continue;
    }
    append_header(out, family.name, family.help,
                  family.type == Type::kCounter ? "counter"
                  : family.type == Type::kGauge ? "gauge"
                                                : "histogram");
    for (const Series* series : view.series) {
      if (const auto* counter = std::get_if<Counter>(&series->metric)) {
        append_sample(out, family.name, "", series->labels, "", counter->value());
      } else if (const auto* gauge = std::get_if<Gauge>(&series->metric)) {
        append_sample(out, family.name, "", series->labels, "", gauge->value());
      } else {
        append_histogram(out, family.name, series->labels,
                         std::get<Histogram>(series->metric).snapshot());
      }
    }
  }
  return out;
}

const MetricsRegistry::Series* MetricsRegistry::find_series_locked(std::string_view name,
                                                                   const Labels& labels) const {
  const auto family = by_name_.find(name);
  if (family == by_name_.end()) {
    return nullptr;
  }
  const auto series = family->second->by_labels.find(sorted_labels(labels));
  return series == family->second->by_labels.end() ? nullptr : series->second;
}

std::optional<double> MetricsRegistry::value(std::string_view name, const Labels& labels) const {
  std::lock_guard lock(mutex_);
  const Series* series = find_series_locked(name, labels);
  if (series == nullptr) {
    return std::nullopt;
  }
  if (const auto* counter = std::get_if<Counter>(&series->metric)) {
    return counter->value();
  }
  if (const auto* gauge = std::get_if<Gauge>(&series->metric)) {
    return gauge->value();
  }
  return std::nullopt;
}

std::optional<Histogram::Snapshot> MetricsRegistry::histogram_snapshot(std::string_view name,
                                                                       const Labels& labels) const {
  std::lock_guard lock(mutex_);
  const Series* series = find_series_locked(name, labels);
  if (series == nullptr) {
    return std::nullopt;
  }
  if (const auto* histogram = std::get_if<Histogram>(&series->metric)) {
    return histogram->snapshot();
  }
  return std::nullopt;
}

double MetricsRegistry::sum(std::string_view name, const Labels& label_filter) const {
  std::lock_guard lock(mutex_);
  const auto family = by_name_.find(name);
  if (family == by_name_.end()) {
    return 0;
  }
  double total = 0;
  for (const auto& series : family->second->series) {
    if (!includes_all(series->labels, label_filter)) {
      continue;
    }
    if (const auto* counter = std::get_if<Counter>(&series->metric)) {
      total += counter->value();
    } else if (const auto* gauge = std::get_if<Gauge>(&series->metric)) {
      total += gauge->value();
    }
  }
  return total;
}

}  // namespace tandem::telemetry
