#pragma once
// What the request planner (gateway_planner.cpp) settles for one request, and what the
// executor (gateway.cpp) runs: the steps to try in order and what the request's end must
// record. Internal to the server component.
//
// Thread-safety: one request's plan, used on that request's strand only.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "routing/query_kind.h"
#include "server/gateway.h"
#include "server/gateway_shadow.h"

namespace tandem::server {

// One step of a plan: a tier on its own or a pattern that composes tiers.
enum class PlanStep { kEdge, kCloud, kCascade, kSpeculative, kCollaborate, kReview };

struct Gateway::Plan {
  // Tried in order until one answers; a later step answers only when nothing reached the
  // client yet (the fallback across tiers).
  std::vector<PlanStep> steps;
  // Shadow mode's view of the request when it applies: the steps answer into it.
  std::unique_ptr<ShadowRequest> shadow;
  bool cloud_allowed = true;  // the routing lets the request's data leave the device
  routing::QueryKind kind = routing::QueryKind::kOpen;
  double complexity = 0.5;
  // The consistency memory: whose similar queries, and whether this answer's tier is kept.
  std::string client;
  std::vector<uint64_t> cluster_keys;
  bool remember = false;
  std::string logged_prompt;  // operations.log_prompts: the last user message
  bool traced = true;         // false: the request is not worth a trace (an unknown model)
};

}  // namespace tandem::server
