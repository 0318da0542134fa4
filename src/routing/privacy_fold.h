#pragma once
// Evasion folding for the privacy scanner: the detectors read a folded copy of the prompt in
// which full-width forms, Unicode spaces, dashes and digits are ASCII and invisible characters
// are gone, and every finding is mapped back to the original bytes through a sparse map of the
// places where folding changed a length. Kept
// apart from the detectors so that they only ever see ASCII-shaped text.
//
// Internal to the routing library: see privacy_scanner.h for the contract.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tandem::routing::privacy_detail {

// Whether every byte is ASCII: such text needs no folding, the common case.
bool is_ascii(std::string_view s);

// Buffers reused across calls on one thread, so a warm scan of ASCII text allocates nothing
// beyond its findings.
struct Scratch {
  // One entry wherever the folded text's offsets part from the original's: from folded offset
  // `folded` on, folded byte p is original byte `original + (p - folded)`. Folding is the
  // identity almost everywhere (CJK prose folds only its full-width punctuation), so a per-byte
  // map would cost four bytes written per byte read for nothing.
  struct Shift {
    uint32_t folded;
    uint32_t original;
  };
  std::string folded;
  std::vector<Shift> shifts;

  // One 200,000-character prompt must not pin megabytes to a worker thread for good.
  void trim();
};

Scratch& thread_scratch();

// The text the detectors read, and the way back to the original bytes. Offsets are 32-bit: the
// caller passes at most 4 GiB.
class FoldedText {
 public:
  // Folds `original` into the scratch buffers, unless it is plain ASCII; both must outlive this.
  FoldedText(std::string_view original, Scratch& scratch);

  std::string_view text() const { return text_; }

  // The original bytes behind the folded bytes [begin, end), as offset and length.
  std::pair<size_t, size_t> original_span(size_t begin, size_t end) const;

 private:
  size_t fold_into(Scratch& scratch) const;
  size_t original_offset(size_t folded) const;

  std::string_view original_;
  std::string_view text_;
  const Scratch::Shift* shifts_ = nullptr;  // null: the text is the original
  size_t shift_count_ = 0;
};

}  // namespace tandem::routing::privacy_detail
