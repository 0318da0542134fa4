#pragma once
// Turns the raw bytes of sampled tokens into text that is safe to show a client while it
// streams: never half of a UTF-8 character (one character can span several tokens) and never
// the beginning of a stop string that might still complete (a stop string can span tokens).
// Pure and single-threaded: one instance per generation.

#include <string>
#include <string_view>
#include <vector>

namespace tandem::engine {

// Length of the longest prefix of `text` that does not end inside a UTF-8 sequence. Invalid
// bytes count as complete (they will never become valid), so the result only holds back a
// trailing sequence that is still a valid beginning.
size_t utf8_complete_prefix_length(std::string_view text);

// Replaces every invalid UTF-8 sequence with U+FFFD so the text can go into JSON.
std::string utf8_sanitize(std::string_view text);

class TextStream {
 public:
  explicit TextStream(std::vector<std::string> stop_strings);

  struct Update {
    std::string text;      // newly releasable text (may be empty)
    bool stopped = false;  // a stop string was found; nothing more will be released
  };

  // Adds the bytes of one token.
  Update push(std::string_view piece);

  // Releases whatever is still held at the end of generation (an unfinished stop-string
  // prefix is text after all; an incomplete UTF-8 tail becomes U+FFFD).
  std::string finish();

  // Everything released so far.
  const std::string& released() const { return released_; }

 private:
  size_t longest_stop_prefix_suffix() const;

  std::vector<std::string> stops_;
  std::string pending_;
  std::string released_;
  bool stopped_ = false;
};

}  // namespace tandem::engine
