#include "telemetry/metrics.h"

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tandem::telemetry {
namespace {

TEST(MetricsRender, EmptyRegistryRendersNothing) {
  MetricsRegistry registry;
  EXPECT_EQ(registry.render(), "");
}

TEST(MetricsRender, RendersEachTypeExactly) {
  MetricsRegistry registry;
  registry.counter("tandem_requests_total", "Requests served.", {{"tier", "edge"}}).add(3);
  registry.counter("tandem_requests_total", "Requests served.", {{"tier", "cloud"}}).add(0.5);
  registry.gauge("tandem_in_flight", "Requests in flight.").set(-2);
  Histogram& latency =
      registry.histogram("tandem_latency_seconds", "Latency.", {0.1, 1, 2.5}, {{"tier", "edge"}});
  for (const double v : {0.0625, 0.25, 1.0, 7.0}) {
    latency.observe(v);
  }
  EXPECT_EQ(registry.render(),
            "# HELP tandem_requests_total Requests served.\n"
            "# TYPE tandem_requests_total counter\n"
            "tandem_requests_total{tier=\"edge\"} 3\n"
            "tandem_requests_total{tier=\"cloud\"} 0.5\n"
            "# HELP tandem_in_flight Requests in flight.\n"
            "# TYPE tandem_in_flight gauge\n"
            "tandem_in_flight -2\n"
            "# HELP tandem_latency_seconds Latency.\n"
            "# TYPE tandem_latency_seconds histogram\n"
            "tandem_latency_seconds_bucket{tier=\"edge\",le=\"0.1\"} 1\n"
            "tandem_latency_seconds_bucket{tier=\"edge\",le=\"1\"} 3\n"
            "tandem_latency_seconds_bucket{tier=\"edge\",le=\"2.5\"} 3\n"
            "tandem_latency_seconds_bucket{tier=\"edge\",le=\"+Inf\"} 4\n"
            "tandem_latency_seconds_sum{tier=\"edge\"} 8.3125\n"
            "tandem_latency_seconds_count{tier=\"edge\"} 4\n");
}

TEST(MetricsRender, HistogramWithoutLabels) {
  MetricsRegistry registry;
  registry.histogram("h", "H.", {1});
  EXPECT_EQ(registry.render(),
            "# HELP h H.\n# TYPE h histogram\n"
            "h_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 0\nh_sum 0\nh_count 0\n");
}

TEST(MetricsRender, NumberFormats) {
  struct Case {
    double value;
    const char* text;
  };
  const std::vector<Case> cases = {
      {0, "0"},
      {-0.0, "0"},
      {42, "42"},
      {-7, "-7"},
      {0.1, "0.1"},
      {1.5e-7, "1.5e-07"},
      {9007199254740991.0, "9007199254740991"},  // 2^53 - 1: still printed as an integer
      {9007199254740992.0, "9007199254740992"},  // 2^53: shortest round-trip form
      {1e20, "1e+20"},
      {std::numeric_limits<double>::quiet_NaN(), "NaN"},
      {std::numeric_limits<double>::infinity(), "+Inf"},
      {-std::numeric_limits<double>::infinity(), "-Inf"},
  };
  for (const Case& c : cases) {
    MetricsRegistry registry;
    registry.gauge("g", "G.").set(c.value);
    EXPECT_EQ(registry.render(), std::string("# HELP g G.\n# TYPE g gauge\ng ") + c.text + "\n")
        << c.text;
  }
}

TEST(MetricsRender, EscapesHelpAndLabelValues) {
  MetricsRegistry registry;
  registry.counter("c", "Say \"hi\"\\bye\nnext", {{"path", "a\"b\\c\nd"}}).add();
  EXPECT_EQ(registry.render(),
            "# HELP c Say \"hi\"\\\\bye\\nnext\n"  // quotes stay as they are in HELP
            "# TYPE c counter\n"
            "c{path=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST(MetricsRender, LabelsKeepTheCallersOrderAndIdentifyTheSeriesAsASet) {
  MetricsRegistry registry;
  Counter& first = registry.counter("c", "C.", {{"zone", "eu"}, {"app", "x"}});
  Counter& reordered = registry.counter("c", "C.", {{"app", "x"}, {"zone", "eu"}});
  EXPECT_EQ(&first, &reordered);
  reordered.add(2);
  EXPECT_EQ(registry.render(), "# HELP c C.\n# TYPE c counter\nc{zone=\"eu\",app=\"x\"} 2\n");
}

TEST(MetricsRender, FamiliesInRegistrationOrderSeriesInCreationOrder) {
  MetricsRegistry registry;
  registry.gauge("b", "B.", {{"k", "2"}});
  registry.counter("a", "A.");
  registry.gauge("b", "B.", {{"k", "1"}});
  EXPECT_EQ(registry.render(),
            "# HELP b B.\n# TYPE b gauge\nb{k=\"2\"} 0\nb{k=\"1\"} 0\n"
            "# HELP a A.\n# TYPE a counter\na 0\n");
}

TEST(MetricsRender, FirstHelpWins) {
  MetricsRegistry registry;
  registry.counter("c", "First.", {{"k", "1"}});
  registry.counter("c", "Second.", {{"k", "2"}});
  EXPECT_EQ(registry.render(), "# HELP c First.\n# TYPE c counter\nc{k=\"1\"} 0\nc{k=\"2\"} 0\n");
}

TEST(MetricsRegistry, SameNameAndLabelsGiveTheSameObject) {
  MetricsRegistry registry;
  EXPECT_EQ(&registry.counter("c", "C."), &registry.counter("c", "C."));
  EXPECT_NE(&registry.counter("c", "C.", {{"k", "1"}}), &registry.counter("c", "C."));
  EXPECT_EQ(&registry.gauge("g", "G.", {{"k", "1"}}), &registry.gauge("g", "G.", {{"k", "1"}}));
  EXPECT_EQ(&registry.histogram("h", "H.", {1, 2}), &registry.histogram("h", "H.", {1, 2}));
}

TEST(MetricsRegistry, ReferencesSurviveManyRegistrations) {
  MetricsRegistry registry;
  Counter& early = registry.counter("c", "C.", {{"i", "0"}});
  for (int i = 1; i < 1000; ++i) {
    registry.counter("c", "C.", {{"i", std::to_string(i)}}).add();
    registry.gauge("g" + std::to_string(i), "G.").set(i);
  }
  early.add(5);
  EXPECT_EQ(registry.value("c", {{"i", "0"}}), 5);
  EXPECT_EQ(registry.sum("c"), 1004);
}

TEST(MetricsCounter, OnlyGoesUp) {
  Counter counter;
  counter.add();
  counter.add(2.5);
  counter.add(-10);
  counter.add(std::numeric_limits<double>::quiet_NaN());
  counter.add(std::numeric_limits<double>::infinity());
  EXPECT_EQ(counter.value(), 3.5);
}

TEST(MetricsGauge, SetAndAdd) {
  Gauge gauge;
  gauge.set(10);
  gauge.add(-3);
  gauge.add(0.5);
  EXPECT_EQ(gauge.value(), 7.5);
}

TEST(MetricsConcurrency, EightThreadsOfHundredThousandAddsAreExact) {
  MetricsRegistry registry;
  constexpr int kThreads = 8;
  constexpr int kAdds = 100000;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&registry] {
      // Each thread looks the metrics up itself, racing the registrations too.
      Counter& counter = registry.counter("requests_total", "R.", {{"tier", "edge"}});
      Gauge& gauge = registry.gauge("in_flight", "I.");
      Histogram& histogram = registry.histogram("latency", "L.", {0.5, 1});
      for (int i = 0; i < kAdds; ++i) {
        counter.add();
        gauge.add(1);
        gauge.add(-1);
        histogram.observe(i % 2 == 0 ? 0.5 : 2);
      }
    });
  }
  std::thread scraper([&registry] {
    for (int i = 0; i < 50; ++i) {
      registry.render();  // scrapes race the updates and registrations
    }
  });
  for (auto& thread : threads) {
    thread.join();
  }
  scraper.join();
  EXPECT_EQ(registry.value("requests_total", {{"tier", "edge"}}), kThreads * kAdds);
  EXPECT_EQ(registry.value("in_flight"), 0);
  const auto snapshot = registry.histogram_snapshot("latency");
  ASSERT_TRUE(snapshot.has_value());
  EXPECT_EQ(snapshot->count, static_cast<uint64_t>(kThreads * kAdds));
  EXPECT_EQ(snapshot->cumulative_counts, (std::vector<uint64_t>{400000, 400000, 800000}));
  EXPECT_EQ(snapshot->sum, 0.5 * 400000 + 2 * 400000);
}

TEST(MetricsHistogram, UpperBoundsAreInclusive) {
  Histogram histogram({1, 2, 4});
  for (const double v : {-5.0, 1.0, std::nextafter(1.0, 2.0), 2.0, 4.0, 4.5}) {
    histogram.observe(v);
  }
  const Histogram::Snapshot snapshot = histogram.snapshot();
  EXPECT_EQ(snapshot.upper_bounds, (std::vector<double>{1, 2, 4}));
  // le=1: -5, 1; le=2: + just above 1, 2; le=4: + 4; +Inf: + 4.5
  EXPECT_EQ(snapshot.cumulative_counts, (std::vector<uint64_t>{2, 4, 5, 6}));
  EXPECT_EQ(snapshot.count, 6u);
}

TEST(MetricsHistogram, IgnoresNonFiniteObservations) {
  Histogram histogram({1});
  histogram.observe(std::numeric_limits<double>::quiet_NaN());
  histogram.observe(std::numeric_limits<double>::infinity());
  histogram.observe(0.5);
  const Histogram::Snapshot snapshot = histogram.snapshot();
  EXPECT_EQ(snapshot.count, 1u);
  EXPECT_EQ(snapshot.sum, 0.5);
}

TEST(MetricsHistogram, BucketHelpers) {
  EXPECT_EQ(exponential_buckets(0.5, 2, 4), (std::vector<double>{0.5, 1, 2, 4}));
  EXPECT_EQ(exponential_buckets(1, 10, 1), (std::vector<double>{1}));
  const std::vector<double> latency = latency_buckets_seconds();
  EXPECT_TRUE(valid_bucket_bounds(latency));
  EXPECT_EQ(latency.front(), 0.005);
  EXPECT_EQ(latency.back(), 60);
  EXPECT_TRUE(valid_bucket_bounds({}));
  EXPECT_FALSE(valid_bucket_bounds({1, 1}));
  EXPECT_FALSE(valid_bucket_bounds({2, 1}));
  EXPECT_FALSE(valid_bucket_bounds({1, std::numeric_limits<double>::infinity()}));
  EXPECT_FALSE(valid_bucket_bounds({std::numeric_limits<double>::quiet_NaN()}));
}

TEST(MetricsGaugeFunction, RendersCollectedSamples) {
  MetricsRegistry registry;
  Counter& requests = registry.counter("requests_total", "R.");
  requests.add(4);
  // Reads the registry it is rendered by: render() must not hold the lock while calling it.
  registry.gauge_function("queue_depth", "Q.", [&registry] {
    const double requests_seen = registry.value("requests_total").value_or(-1);
    return std::vector<std::pair<Labels, double>>{{{{"queue", "review"}}, requests_seen},
                                                  {{{"queue", "edge"}}, 1}};
  });
  EXPECT_EQ(registry.render(),
            "# HELP requests_total R.\n# TYPE requests_total counter\nrequests_total 4\n"
            "# HELP queue_depth Q.\n# TYPE queue_depth gauge\n"
            "queue_depth{queue=\"review\"} 4\nqueue_depth{queue=\"edge\"} 1\n");
}

TEST(MetricsGaugeFunction, SkipsBadSamplesAndEmptyFamilies) {
  MetricsRegistry registry;
  registry.gauge_function("none", "N.", [] { return std::vector<std::pair<Labels, double>>{}; });
  registry.gauge_function("throws", "T.", []() -> std::vector<std::pair<Labels, double>> {
    throw std::runtime_error("collector failed");
  });
  registry.gauge_function("mixed", "M.", [] {
    return std::vector<std::pair<Labels, double>>{
        {{{"bad-name", "x"}}, 1}, {{{"__reserved", "x"}}, 2}, {{{"k", "a"}, {"k", "b"}}, 3},
        {{{"k", "ok"}}, 4},       {{{"k", "ok"}}, 5},         {{}, 6}};
  });
  EXPECT_EQ(registry.render(), "# HELP mixed M.\n# TYPE mixed gauge\nmixed{k=\"ok\"} 4\nmixed 6\n");
  EXPECT_EQ(registry.value("mixed"), std::nullopt);  // gauge functions are not read back
}

TEST(MetricsNames, Validation) {
  for (const char* name : {"a", "_", ":", "tandem_requests_total", "job:rate5m", "A9_:z", "__x"}) {
    EXPECT_TRUE(valid_metric_name(name)) << name;
  }
  for (const char* name : {"", "9a", "a-b", "a b", "é", "a.b"}) {
    EXPECT_FALSE(valid_metric_name(name)) << name;
  }
  for (const char* name : {"a", "_", "tier", "Z9_x", "_x"}) {
    EXPECT_TRUE(valid_label_name(name)) << name;
  }
  for (const char* name : {"", "9a", "a:b", "__name__", "__x", "a-b", "a b"}) {
    EXPECT_FALSE(valid_label_name(name)) << name;
  }
}

// Each way of misusing the registry: an assertion in debug builds, and in release builds a
// working but never rendered metric, so the exposition is unchanged.
TEST(MetricsMisuse, AssertsInDebugAndDropsInRelease) {
  struct Case {
    const char* what;
    std::function<void(MetricsRegistry&)> misuse;
  };
  const std::vector<Case> cases = {
      {"invalid metric name", [](MetricsRegistry& r) { r.counter("bad-name", "B.").add(); }},
      {"invalid label name",
       [](MetricsRegistry& r) {
         r.gauge("g", "G.", {{"a b", "x"}}).set(1);
       }},
      {"reserved label name",
       [](MetricsRegistry& r) {
         r.counter("c", "C.", {{"__name__", "x"}}).add();
       }},
      {"label given twice",
       [](MetricsRegistry& r) {
         r.counter("c", "C.", {{"k", "1"}, {"k", "2"}}).add();
       }},
      {"counter as gauge", [](MetricsRegistry& r) { r.gauge("requests_total", "R.").set(9); }},
      {"counter as histogram",
       [](MetricsRegistry& r) { r.histogram("requests_total", "R.", {1}).observe(1); }},
      {"gauge function as gauge", [](MetricsRegistry& r) { r.gauge("depth", "D.").set(9); }},
      {"histogram bounds differ",
       [](MetricsRegistry& r) {
         r.histogram("latency", "L.", {1, 3}).observe(1);
       }},
      {"invalid bounds",
       [](MetricsRegistry& r) {
         r.histogram("h2", "H.", {2, 1}).observe(1);
       }},
      {"le label on a histogram",
       [](MetricsRegistry& r) {
         r.histogram("h2", "H.", {1}, {{"le", "1"}}).observe(1);
       }},
      {"histogram series name", [](MetricsRegistry& r) { r.counter("latency_count", "C.").add(); }},
      {"histogram over a counter's name",
       [](MetricsRegistry& r) { r.histogram("queue", "Q.", {1}).observe(1); }},
      {"gauge function twice",
       [](MetricsRegistry& r) {
         r.gauge_function("depth", "D.", [] { return std::vector<std::pair<Labels, double>>{}; });
       }},
      {"empty gauge function",
       [](MetricsRegistry& r) { r.gauge_function("depth2", "D.", MetricsRegistry::Collect{}); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    MetricsRegistry registry;
    registry.counter("requests_total", "R.").add();
    registry.histogram("latency", "L.", {1, 2});
    registry.counter("queue_count", "Q.");
    registry.gauge_function("depth", "D.", [] {
      return std::vector<std::pair<Labels, double>>{{{}, 3}};
    });
    const std::string before = registry.render();
#ifdef NDEBUG
    c.misuse(registry);
    EXPECT_EQ(registry.render(), before);
#else
    EXPECT_DEATH(c.misuse(registry), "metric misuse");
#endif
  }
}

TEST(MetricsReadBack, ValueAndHistogramSnapshot) {
  MetricsRegistry registry;
  registry.counter("c", "C.", {{"a", "1"}, {"b", "2"}}).add(3);
  registry.gauge("g", "G.").set(-1.5);
  registry.histogram("h", "H.", {1}).observe(0.5);
  EXPECT_EQ(registry.value("c", {{"b", "2"}, {"a", "1"}}), 3);
  EXPECT_EQ(registry.value("g"), -1.5);
  EXPECT_EQ(registry.value("c"), std::nullopt);  // no series without labels
  EXPECT_EQ(registry.value("missing"), std::nullopt);
  EXPECT_EQ(registry.value("h"), std::nullopt);
  EXPECT_FALSE(registry.histogram_snapshot("c", {{"a", "1"}, {"b", "2"}}).has_value());
  const auto snapshot = registry.histogram_snapshot("h");
  ASSERT_TRUE(snapshot.has_value());
  EXPECT_EQ(snapshot->cumulative_counts, (std::vector<uint64_t>{1, 1}));
  EXPECT_EQ(snapshot->sum, 0.5);
}

TEST(MetricsReadBack, SumWithLabelFilters) {
  MetricsRegistry registry;
  registry.counter("requests_total", "R.", {{"tier", "edge"}, {"status", "ok"}}).add(3);
  registry.counter("requests_total", "R.", {{"tier", "edge"}, {"status", "error"}}).add(1);
  registry.counter("requests_total", "R.", {{"status", "ok"}, {"tier", "cloud"}}).add(5);
  registry.gauge("in_flight", "I.", {{"tier", "edge"}}).set(2);
  registry.gauge("in_flight", "I.", {{"tier", "cloud"}}).set(-0.5);
  EXPECT_EQ(registry.sum("requests_total"), 9);
  EXPECT_EQ(registry.sum("requests_total", {{"tier", "edge"}}), 4);
  EXPECT_EQ(registry.sum("requests_total", {{"status", "ok"}}), 8);
  EXPECT_EQ(registry.sum("requests_total", {{"status", "ok"}, {"tier", "edge"}}), 3);
  EXPECT_EQ(registry.sum("requests_total", {{"tier", "human"}}), 0);
  EXPECT_EQ(registry.sum("requests_total", {{"region", "eu"}}), 0);
  EXPECT_EQ(registry.sum("in_flight"), 1.5);
  EXPECT_EQ(registry.sum("missing"), 0);
}

}  // namespace
}  // namespace tandem::telemetry
