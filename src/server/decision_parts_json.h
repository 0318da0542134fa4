#pragma once
// The decision record's parts (decision_parts.h) as JSON text: the one place they are
// formatted, for DecisionRecord::write_json. Members go in name order, the order nlohmann::json
// wrote them in when the parts were JSON values, so clients and stored tickets see the same
// bytes; numbers keep their kind (a count is an integer, a measure a float).
//
// Stateless functions; each writes one value into the writer it is given.

#include "common/json_writer.h"
#include "server/decision_parts.h"

namespace tandem::server {

void write_json(JsonWriter& out, const RoutingPart& routing);
void write_json(JsonWriter& out, const ConfidencePart& confidence);
void write_json(JsonWriter& out, const EscalationPart& escalation);
void write_json(JsonWriter& out, const VerificationPart& verification);
void write_json(JsonWriter& out, const Revision& revision);
void write_json(JsonWriter& out, const CollaborationPart& collaboration);
void write_json(JsonWriter& out, const ReviewPart& review);
void write_json(JsonWriter& out, const ConsistencyPart& consistency);
void write_json(JsonWriter& out, const ShadowPart& shadow);

}  // namespace tandem::server
