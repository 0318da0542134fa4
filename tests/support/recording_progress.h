#pragma once
// A Progress that keeps every report, so a test can check what long work said about itself:
// its phases in order, and that each one counts up to the total it announced.

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "common/progress.h"

namespace tandem::testing_support {

class RecordingProgress final : public Progress {
 public:
  struct Phase {
    std::string label;
    std::size_t total = 0;
    std::vector<std::size_t> updates;
  };

  void phase(std::string_view label, std::size_t total) override {
    phases_.push_back({std::string(label), total, {}});
  }
  void update(std::size_t done) override {
    if (phases_.empty()) {
      ADD_FAILURE() << "update(" << done << ") before any phase";
      return;
    }
    phases_.back().updates.push_back(done);
  }

  const std::vector<Phase>& phases() const { return phases_; }

  std::vector<std::string> labels() const {
    std::vector<std::string> out;
    for (const auto& p : phases_) {
      out.push_back(p.label);
    }
    return out;
  }

  // Every phase's reports never go back and the last one is its total (a phase of unknown total
  // or of no steps may report nothing).
  ::testing::AssertionResult every_phase_completes() const {
    for (const auto& p : phases_) {
      for (std::size_t i = 1; i < p.updates.size(); ++i) {
        if (p.updates[i] < p.updates[i - 1]) {
          return ::testing::AssertionFailure() << "'" << p.label << "' went back";
        }
      }
      const std::size_t last = p.updates.empty() ? 0 : p.updates.back();
      if (p.total > 0 && last != p.total) {
        return ::testing::AssertionFailure()
               << "'" << p.label << "' ended at " << last << " of " << p.total;
      }
    }
    return ::testing::AssertionSuccess();
  }

 private:
  std::vector<Phase> phases_;
};

}  // namespace tandem::testing_support
