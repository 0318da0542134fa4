#pragma once
// Which bytes of a prompt state the request and which are the material it is about. "Which
// cloud provider does this paragraph name? <a paragraph about outages and failover>" asks an
// extraction; read as a bag of words, the paragraph makes it look like a system design. The
// task model (task_ngrams.h) weighs the request's n-grams above the material's.
//
// The request is where the cue scan looks for it (prompt_scanner.cpp): the first line when it
// is short, else its first sentence ("<article>. ... Summarise the above."); when the text has
// more lines, also the last line (whole when short, else its last sentence). From those spans
// two kinds of material are cut:
//   - quoted text of kMinQuotedBytes or more: "...", '...', “...”, ‘...’, 「...」, 『...』;
//   - a tail of kMinColonTailBytes or more after a colon ("Label this ticket: <ticket>").
// Everything else (the lines between, what was cut) is material. The rules are heuristics, so
// the task model only weighs material down, never leaves it out: a request misread as material
// still counts.
//
// Thread-safety: pure functions.

#include <array>
#include <cstddef>
#include <string_view>

namespace tandem::routing {

inline constexpr size_t kMinQuotedBytes = 32;
inline constexpr size_t kMinColonTailBytes = 48;

struct TextSpan {
  size_t begin = 0;
  size_t end = 0;  // one past the last byte
};

// The first (last) line with something on it, blanks at its ends included; begin == end when
// the text has none.
TextSpan first_content_line(std::string_view text);
TextSpan last_content_line(std::string_view text);

// The request's spans, in order, not overlapping. Quoted material beyond the capacity stays in
// the request (a line with more than a few quotations is rare, and the request then still
// counts).
struct RequestSpans {
  static constexpr size_t kCapacity = 8;
  std::array<TextSpan, kCapacity> spans{};
  size_t count = 0;
};

// `read_first`: look for the request at the text's start; `read_last`: at its end (a long
// prompt's two windows each pass one).
RequestSpans find_request_spans(std::string_view text, bool read_first, bool read_last);

// A long prompt's request is at its ends, so it is read in its first and its last
// kRequestWindowBytes (what is pasted between is material), which bounds the cost at any
// length; a prompt of up to two windows is one window, read at both ends.
inline constexpr size_t kRequestWindowBytes = 1024;

struct RequestWindow {
  std::string_view text;  // cut at character boundaries
  RequestSpans spans;     // offsets into `text`
};

// The request of a whole prompt, found once for every reader (the task model's n-grams, the
// answer size asked for).
struct PromptRequest {
  std::array<RequestWindow, 2> windows{};
  size_t count = 0;
};

PromptRequest find_prompt_request(std::string_view text);
// The same in windows of `window_bytes` (more than a few bytes; a thread's earlier messages are
// read in smaller ones, thread_task.h).
PromptRequest find_prompt_request(std::string_view text, size_t window_bytes);

}  // namespace tandem::routing
