#pragma once
// Readings of a prompt's text beside the cue scan's one pass (prompt_scanner.cpp): whether a
// negation forbids the task a cue names ("do not explain"), whether a cue word is part of a
// tool's identifier rather than a task asked, and how long the prompt is once the material
// between its first and last lines is weighed down.
//
// Thread-safety: pure functions.

#include <cstddef>
#include <string_view>

namespace tandem::routing {

// How much of the text between a prompt's first and last lines (the material) counts toward
// its length. Measured on the pair files and the left-out benchmarks at 1, 0.5 and 0.25
// (docs/ROUTER_TRAINING.md, "How long the prompt is").
inline constexpr double kMaterialLengthWeight = 0.25;

// The prompt's length as the length features read it: its first and last lines whole, what
// lies between at kMaterialLengthWeight. Long inputs lean cloud (the framework), but a lookup
// in three pages of a contract asks for one fact: the pages are what the answer is found in,
// not how much the answer must do. A prompt of one line is all request.
double weighed_prompt_length(std::string_view text);

// `total` counted with `request` of it in the first and last lines: the request whole, the rest
// at kMaterialLengthWeight (request <= total).
double weigh_material(size_t total, size_t request);

// Whether a negation just before text[at], in the clause that began at `clause_start`, forbids
// the task named there: "Do not explain", "no analysis needed", "without over-explaining",
// "不要任何解释", "不用分析". Three words back in English ("do not explain or analyze"), twelve
// characters of Chinese ("不要对错误做任何解释或分析"); a task named before the negation keeps
// it ("Prove it without induction"), as does one in the next clause ("Don't translate it;
// analyze it").
bool task_negated_before(std::string_view text, size_t clause_start, size_t at);

// Whether the word text[begin, end) is part of an identifier or a parameter rather than a word
// of the request: joined to another word by '_' or '.' ("zendesk.search_tickets",
// "get_transcript"), named as a parameter or called ("sort=created_asc", "list("), or inside a
// parameter's quoted value (`title="Orders DB migration sync"`). Agents paste a tool call's
// header above its result ("Tool result (pagerduty.list_incidents, ...):"); its words name the
// tool, not what the user asks of its output.
bool part_of_identifier(std::string_view text, size_t begin, size_t end);

}  // namespace tandem::routing
