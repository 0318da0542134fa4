#include "routing/privacy_fold.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace tandem::routing::privacy_detail {
namespace {

struct CodePoint {
  char32_t value = 0;
  size_t length = 0;  // 0: not valid UTF-8 here
};

// Strict decoding (no overlong forms, surrogates or values past U+10FFFF) that never reads
// past the end; anything else is an opaque byte.
CodePoint decode_utf8(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    return {b0, 1};
  }
  size_t length = 0;
  char32_t value = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
    value = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    value = b0 & 0x0F;
    low = b0 == 0xE0 ? 0xA0 : 0x80;
    high = b0 == 0xED ? 0x9F : 0xBF;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    value = b0 & 0x07;
    low = b0 == 0xF0 ? 0x90 : 0x80;
    high = b0 == 0xF4 ? 0x8F : 0xBF;
  } else {
    return {};
  }
  if (s.size() - i < length) {
    return {};
  }
  for (size_t k = 1; k < length; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < low || b > high) {
      return {};
    }
    low = 0x80;
    high = 0xBF;
    value = (value << 6) | (b & 0x3F);
  }
  return {value, length};
}

// Where the character holding byte i starts: i itself unless i is a continuation byte of a
// valid multi-byte character, as the folding pass read it (a lead byte is never a continuation
// byte, so the nearest one behind i that decodes over i is where that pass began).
size_t char_start(std::string_view s, size_t i) {
  for (size_t back = 1; back <= 3 && back <= i; ++back) {
    const auto b = static_cast<unsigned char>(s[i - back + 1]);
    if (b < 0x80 || b > 0xBF) {
      return i;  // an ASCII or lead byte inside the reach: i is not part of a character before it
    }
    const CodePoint cp = decode_utf8(s, i - back);
    if (cp.length > 0) {
      return cp.length > back ? i - back : i;
    }
  }
  return i;
}

// Bytes of the character at i, as the folding pass read it.
size_t char_length(std::string_view s, size_t i) {
  const CodePoint cp = decode_utf8(s, i);
  return cp.length > 0 ? cp.length : 1;
}

constexpr int kKeep = -1;  // copy the character unchanged
constexpr int kDrop = -2;  // invisible: leave it out

// What a non-ASCII character becomes in the folded text: an ASCII character, kDrop or kKeep.
int fold(char32_t cp) {
  if (cp >= 0xFF01 && cp <= 0xFF5E) {  // full-width ASCII
    return static_cast<int>(cp - 0xFF01 + 0x21);
  }
  switch (cp) {
    case 0x3000:  // ideographic space
    case 0x00A0:  // no-break spaces
    case 0x202F:
    case 0x205F:
      return ' ';
    case 0x3002:  // ideographic full stops: IDNA reads them as '.', and so do mail clients
    case 0xFF61:
      return '.';
    case 0xFE6B:  // small commercial at
      return '@';
    case 0x2212:  // minus sign, small and full-width hyphen-minus
    case 0xFE58:
    case 0xFE63:
      return '-';
    case 0x00AD:  // soft hyphen
    case 0x034F:  // combining grapheme joiner
    case 0x180E:  // Mongolian vowel separator
    case 0xFEFF:  // zero-width no-break space (BOM)
      return kDrop;
    default:
      break;
  }
  if (cp >= 0x2000 && cp <= 0x200A) {  // en quad .. hair space
    return ' ';
  }
  if ((cp >= 0x200B && cp <= 0x200F) ||  // zero-width space and joiners, LRM, RLM
      (cp >= 0x202A && cp <= 0x202E) ||  // bidi embeddings and overrides
      (cp >= 0x2060 && cp <= 0x206F) ||  // word joiner, invisible operators, bidi isolates
      (cp >= 0xFE00 && cp <= 0xFE0F)) {  // variation selectors
    return kDrop;
  }
  if (cp >= 0x2010 && cp <= 0x2015) {  // hyphens and dashes
    return '-';
  }
  if (cp >= 0x0660 && cp <= 0x0669) {  // Arabic-Indic digits
    return static_cast<int>('0' + (cp - 0x0660));
  }
  if (cp >= 0x06F0 && cp <= 0x06F9) {  // extended Arabic-Indic digits
    return static_cast<int>('0' + (cp - 0x06F0));
  }
  if (cp >= 0x1D7CE && cp <= 0x1D7FF) {  // mathematical bold, double-struck, ... digits
    return static_cast<int>('0' + (cp - 0x1D7CE) % 10);
  }
  return kKeep;
}

}  // namespace

namespace {

// For each lead byte, the second bytes (0x80..0xBF, bit b - 0x80) that begin a character
// fold() changes: U+00A0 and U+00AD (C2), U+034F (CD), the Arabic-Indic digits (D9, DB), U+180E
// (E1), U+2000..U+206F and U+2212 (E2), U+3000 and U+3002 (E3), U+FE00..U+FF61 (EF) and the
// mathematical digits (F0). A lead followed by any other byte starts a character that folds to
// itself (kana, Hangul, most Arabic letters share leads with a few folding characters: E3, D9,
// DB) or no valid character at all; either way its bytes are copied as they are.
constexpr std::array<uint64_t, 256> kFoldingSecondBytes = [] {
  std::array<uint64_t, 256> second{};
  const auto add = [&second](unsigned char lead, unsigned char first, unsigned char last) {
    for (unsigned char b = first; b <= last; ++b) {
      second[lead] |= uint64_t{1} << (b - 0x80);
    }
  };
  add(0xC2, 0xA0, 0xA0);  // U+00A0
  add(0xC2, 0xAD, 0xAD);  // U+00AD
  add(0xCD, 0x8F, 0x8F);  // U+034F
  add(0xD9, 0xA0, 0xA9);  // U+0660..U+0669
  add(0xDB, 0xB0, 0xB9);  // U+06F0..U+06F9
  add(0xE1, 0xA0, 0xA0);  // U+1800..U+183F (U+180E)
  add(0xE2, 0x80, 0x81);  // U+2000..U+207F
  add(0xE2, 0x88, 0x88);  // U+2200..U+223F (U+2212)
  add(0xE3, 0x80, 0x80);  // U+3000..U+303F (U+3000, U+3002)
  add(0xEF, 0xB8, 0xBD);  // U+FE00..U+FF7F
  add(0xF0, 0x9D, 0x9D);  // U+1D000..U+1DFFF (the mathematical digits)
  return second;
}();

// The lead bytes above. Every other byte is copied as it is, which is what folding does to it:
// CJK ideographs (E4..E9) and continuation bytes are never decoded.
constexpr std::array<bool, 256> kMayFold = [] {
  std::array<bool, 256> may{};
  for (size_t lead = 0; lead < may.size(); ++lead) {
    may[lead] = kFoldingSecondBytes[lead] != 0;
  }
  return may;
}();

// Whether the character at s[i] (whose lead byte is in kMayFold) may fold: its second byte is
// one that some folding character with this lead has.
bool may_fold_at(std::string_view s, size_t i) {
  if (i + 1 >= s.size()) {
    return true;  // a cut character: decoding says what it is
  }
  const auto second = static_cast<unsigned char>(s[i + 1]);
  const auto lead = static_cast<unsigned char>(s[i]);
  return second >= 0x80 && second < 0xC0 && ((kFoldingSecondBytes[lead] >> (second - 0x80)) & 1);
}

}  // namespace

bool is_ascii(std::string_view s) {
  uint64_t any = 0;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, s.data() + i, sizeof word);
    any |= word;
  }
  for (; i < s.size(); ++i) {
    any |= static_cast<unsigned char>(s[i]);
  }
  return (any & 0x8080808080808080ULL) == 0;
}

void Scratch::trim() {
  constexpr size_t kKeepBytes = size_t{1} << 16;
  if (folded.capacity() > kKeepBytes) {
    folded = std::string();
    shifts = std::vector<Shift>();
  }
}

Scratch& thread_scratch() {
  thread_local Scratch scratch;
  return scratch;
}

FoldedText::FoldedText(std::string_view original, Scratch& scratch) : original_(original) {
  if (is_ascii(original)) {
    text_ = original;  // nothing to fold; offsets are the original ones
    return;
  }
  const size_t length = fold_into(scratch);  // before data(): folding may reallocate
  text_ = std::string_view(scratch.folded.data(), length);
  shifts_ = scratch.shifts.data();
  shift_count_ = scratch.shifts.size();
}

size_t FoldedText::original_offset(size_t folded) const {
  const Scratch::Shift* end = shifts_ + shift_count_;
  const Scratch::Shift* after = std::upper_bound(
      shifts_, end, folded, [](size_t p, const Scratch::Shift& s) { return p < s.folded; });
  const Scratch::Shift& shift = *(after - 1);  // the first shift is at folded offset 0
  return shift.original + (folded - shift.folded);
}

std::pair<size_t, size_t> FoldedText::original_span(size_t begin, size_t end) const {
  if (shifts_ == nullptr) {
    return {begin, end - begin};
  }
  const size_t first = char_start(original_, original_offset(begin));
  const size_t last = char_start(original_, original_offset(end - 1));
  return {first, last + char_length(original_, last) - first};
}

// Folds into the scratch buffers; returns the folded length. Folding never lengthens the text,
// so the buffer is sized once and written without per-byte checks.
size_t FoldedText::fold_into(Scratch& scratch) const {
  if (scratch.folded.size() < original_.size()) {
    scratch.folded.resize(original_.size());
  }
  std::vector<Scratch::Shift>& shifts = scratch.shifts;
  shifts.clear();
  shifts.push_back({0, 0});
  // From folded offset n on, bytes map to the original from offset i.
  const auto shift_at = [&shifts](size_t n, size_t i) {
    const Scratch::Shift shift{static_cast<uint32_t>(n), static_cast<uint32_t>(i)};
    if (shifts.back().folded == shift.folded) {
      shifts.back() = shift;
    } else {
      shifts.push_back(shift);
    }
  };
  char* out = scratch.folded.data();
  const char* in = original_.data();
  const size_t size = original_.size();
  size_t n = 0;
  size_t i = 0;
  while (i < size) {
    // Copy the run of bytes that fold to themselves in one go.
    size_t run = i;
    while (run < size && !kMayFold[static_cast<unsigned char>(in[run])]) {
      ++run;
    }
    std::memcpy(out + n, in + i, run - i);
    n += run - i;
    i = run;
    if (i == size) {
      break;
    }
    if (!may_fold_at(original_, i)) {
      out[n++] = in[i++];  // the lead; its continuation bytes go with the next run
      continue;
    }
    const CodePoint cp = decode_utf8(original_, i);
    const int folded = cp.length > 1 ? fold(cp.value) : kKeep;
    const size_t length = cp.length > 1 ? cp.length : 1;
    if (folded == kKeep) {
      std::memcpy(out + n, in + i, length);
      n += length;
    } else if (folded == kDrop) {
      shift_at(n, i + length);
    } else {
      shift_at(n, i);
      out[n++] = static_cast<char>(folded);
      shift_at(n, i + length);
    }
    i += length;
  }
  return n;
}

}  // namespace tandem::routing::privacy_detail
