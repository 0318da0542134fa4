#include "engine/drift_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace tandem::engine {
namespace {

double ratio_or_zero(double numerator, double denominator) {
  return denominator > 0.0 ? numerator / denominator : 0.0;
}

std::string format_violation(const char* what, double value, const char* relation, double bound,
                             const char* unit) {
  char text[160];
  std::snprintf(text, sizeof(text), "%s %.4g%s %s %.4g", what, value, unit, relation, bound);
  return text;
}

}  // namespace

std::optional<LogSoftmax> log_softmax(std::span<const float> logits) {
  if (logits.empty()) {
    return std::nullopt;
  }
  LogSoftmax result;
  float best = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < logits.size(); ++i) {
    const float x = logits[i];
    if (std::isnan(x) || x == std::numeric_limits<float>::infinity()) {
      return std::nullopt;
    }
    if (x > best) {
      best = x;
      result.argmax = static_cast<int32_t>(i);
    }
  }
  if (std::isinf(best)) {
    return std::nullopt;  // every token ruled out: no distribution at all
  }
  result.max = best;
  // Shifting by the maximum keeps every exponent <= 0: no overflow, and the largest term is 1.
  double sum = 0.0;
  for (const float x : logits) {
    sum += std::exp(static_cast<double>(x) - result.max);
  }
  result.log_sum = std::log(sum);
  return result;
}

double kl_divergence(std::span<const float> p_logits, const LogSoftmax& p,
                     std::span<const float> q_logits, const LogSoftmax& q) {
  double kl = 0.0;
  for (size_t i = 0; i < p_logits.size(); ++i) {
    const double log_p = static_cast<double>(p_logits[i]) - p.max - p.log_sum;
    const double prob = std::exp(log_p);
    if (prob == 0.0) {
      continue;  // 0 * log(0 / q) is 0, and would be NaN where q is also 0
    }
    const double log_q = static_cast<double>(q_logits[i]) - q.max - q.log_sum;
    kl += prob * (log_p - log_q);
  }
  // Each term can round either way; a sum of (at most a few ulp) below zero means "identical".
  return std::max(kl, 0.0);
}

double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) {
    return 0.0;
  }
  std::sort(values.begin(), values.end());
  const double rank = std::clamp(fraction, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto below = static_cast<size_t>(std::floor(rank));
  const size_t above = std::min(below + 1, values.size() - 1);
  const double weight = rank - static_cast<double>(below);
  if (weight == 0.0) {
    return values[below];  // exact rank; also avoids 0 * inf when the next value is infinite
  }
  return values[below] + weight * (values[above] - values[below]);
}

double PromptDrift::mean_kl() const {
  double sum = 0.0;
  for (const double kl : token_kl) {
    sum += kl;
  }
  return ratio_or_zero(sum, static_cast<double>(token_kl.size()));
}

double PromptDrift::max_kl() const {
  return token_kl.empty() ? 0.0 : *std::max_element(token_kl.begin(), token_kl.end());
}

double PromptDrift::top1_agreement() const {
  return ratio_or_zero(top1_agreements, scored_tokens());
}

double PromptDrift::reference_perplexity() const {
  return scored_tokens() > 0 ? std::exp(reference_nll / scored_tokens()) : 0.0;
}

double PromptDrift::candidate_perplexity() const {
  return scored_tokens() > 0 ? std::exp(candidate_nll / scored_tokens()) : 0.0;
}

double PromptDrift::perplexity_ratio() const {
  // exp of the mean log-ratio rather than a quotient of two exps: exact when both overflow.
  return scored_tokens() > 0 ? std::exp((candidate_nll - reference_nll) / scored_tokens()) : 0.0;
}

bool PromptDrift::greedy_exact_match() const {
  return greedy_reference_tokens == greedy_candidate_tokens &&
         greedy_common_prefix == greedy_reference_tokens;
}

double PromptDrift::greedy_prefix_agreement() const {
  const int longer = std::max(greedy_reference_tokens, greedy_candidate_tokens);
  return longer > 0 ? static_cast<double>(greedy_common_prefix) / longer : 1.0;
}

DriftSummary summarize(const std::vector<PromptDrift>& prompts) {
  DriftSummary s;
  s.prompts = prompts.size();
  std::vector<double> all_kl;
  double kl_sum = 0.0;
  size_t agreements = 0;
  double reference_nll = 0.0;
  double candidate_nll = 0.0;
  size_t exact = 0;
  double prefix_sum = 0.0;
  for (const auto& p : prompts) {
    s.prompt_tokens += static_cast<size_t>(p.prompt_tokens);
    s.continuation_tokens += static_cast<size_t>(p.continuation_tokens);
    all_kl.insert(all_kl.end(), p.token_kl.begin(), p.token_kl.end());
    for (const double kl : p.token_kl) {
      kl_sum += kl;
    }
    agreements += static_cast<size_t>(p.top1_agreements);
    reference_nll += p.reference_nll;
    candidate_nll += p.candidate_nll;
    exact += p.greedy_exact_match() ? 1 : 0;
    prefix_sum += p.greedy_prefix_agreement();
  }
  s.scored_tokens = all_kl.size();
  if (s.scored_tokens > 0) {
    const auto n = static_cast<double>(s.scored_tokens);
    s.mean_kl = kl_sum / n;
    s.max_kl = *std::max_element(all_kl.begin(), all_kl.end());
    s.p50_kl = percentile(all_kl, 0.50);
    s.p95_kl = percentile(std::move(all_kl), 0.95);
    s.top1_agreement = static_cast<double>(agreements) / n;
    s.reference_perplexity = std::exp(reference_nll / n);
    s.candidate_perplexity = std::exp(candidate_nll / n);
    s.perplexity_ratio = std::exp((candidate_nll - reference_nll) / n);
  }
  if (s.prompts > 0) {
    s.greedy_exact_match = static_cast<double>(exact) / static_cast<double>(s.prompts);
    s.greedy_prefix_agreement = prefix_sum / static_cast<double>(s.prompts);
  }
  return s;
}

Status validate(const DriftLimits& limits) {
  auto bad = [](const char* field, const char* range) {
    return make_error(ErrorCode::kInvalidArgument, std::string(field) + " must be " + range);
  };
  // Written as !(in range) so that NaN is rejected too.
  if (!(limits.max_mean_kl >= 0.0)) {
    return bad("max_mean_kl", ">= 0 (nats per token)");
  }
  if (!(limits.min_top1_agreement >= 0.0 && limits.min_top1_agreement <= 1.0)) {
    return bad("min_top1_agreement", "between 0 and 1");
  }
  if (!(limits.max_perplexity_ratio > 0.0)) {
    return bad("max_perplexity_ratio", "> 0 (1 means no loss at all)");
  }
  if (!(limits.min_greedy_prefix_agreement >= 0.0 && limits.min_greedy_prefix_agreement <= 1.0)) {
    return bad("min_greedy_prefix_agreement", "between 0 and 1");
  }
  return {};
}

std::vector<LimitViolation> check_limits(const DriftSummary& s, const DriftLimits& limits) {
  std::vector<LimitViolation> violations;
  // Each test is "not within", so a NaN figure fails rather than passes.
  if (!(s.mean_kl <= limits.max_mean_kl)) {
    violations.push_back(
        {"max_mean_kl", s.mean_kl, limits.max_mean_kl,
         format_violation("mean KL", s.mean_kl, "exceeds", limits.max_mean_kl, " nats/token")});
  }
  if (!(s.top1_agreement >= limits.min_top1_agreement)) {
    violations.push_back({"min_top1_agreement", s.top1_agreement, limits.min_top1_agreement,
                          format_violation("top-1 agreement", s.top1_agreement, "is below",
                                           limits.min_top1_agreement, "")});
  }
  if (!(s.perplexity_ratio <= limits.max_perplexity_ratio)) {
    violations.push_back({"max_perplexity_ratio", s.perplexity_ratio, limits.max_perplexity_ratio,
                          format_violation("perplexity ratio", s.perplexity_ratio, "exceeds",
                                           limits.max_perplexity_ratio, "")});
  }
  if (!(s.greedy_prefix_agreement >= limits.min_greedy_prefix_agreement)) {
    violations.push_back({"min_greedy_prefix_agreement", s.greedy_prefix_agreement,
                          limits.min_greedy_prefix_agreement,
                          format_violation("greedy prefix agreement", s.greedy_prefix_agreement,
                                           "is below", limits.min_greedy_prefix_agreement, "")});
  }
  return violations;
}

}  // namespace tandem::engine
