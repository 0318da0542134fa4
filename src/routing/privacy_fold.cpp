#include "routing/privacy_fold.h"

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
    origin = std::vector<uint32_t>();
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
  origin_ = scratch.origin.data();
}

std::pair<size_t, size_t> FoldedText::original_span(size_t begin, size_t end) const {
  if (origin_ == nullptr) {
    return {begin, end - begin};
  }
  const size_t first = origin_[begin];
  const size_t last = origin_[end - 1];
  return {first, last + char_length(original_, last) - first};
}

// Folds into the scratch buffers; returns the folded length. Folding never lengthens the text,
// so the buffers are sized once and written without per-byte checks.
size_t FoldedText::fold_into(Scratch& scratch) const {
  if (scratch.folded.size() < original_.size()) {
    scratch.folded.resize(original_.size());
    scratch.origin.resize(original_.size());
  }
  char* out = scratch.folded.data();
  uint32_t* origin = scratch.origin.data();
  size_t n = 0;
  const size_t size = original_.size();
  for (size_t i = 0; i < size;) {
    // Prose is mostly ASCII even when one curly quote makes folding necessary: copy ASCII
    // runs without decoding them.
    while (i < size && static_cast<unsigned char>(original_[i]) < 0x80) {
      out[n] = original_[i];
      origin[n++] = static_cast<uint32_t>(i++);
    }
    if (i == size) {
      break;
    }
    const auto here = static_cast<uint32_t>(i);
    const CodePoint cp = decode_utf8(original_, i);
    if (cp.length <= 1) {  // ASCII, or an invalid byte passed through as it is
      out[n] = original_[i];
      origin[n++] = here;
      ++i;
      continue;
    }
    const int folded = fold(cp.value);
    if (folded == kKeep) {
      for (size_t k = 0; k < cp.length; ++k) {
        out[n] = original_[i + k];
        origin[n++] = here;
      }
    } else if (folded != kDrop) {
      out[n] = static_cast<char>(folded);
      origin[n++] = here;
    }
    i += cp.length;
  }
  return n;
}

}  // namespace tandem::routing::privacy_detail
