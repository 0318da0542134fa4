#include "common/answer_match.h"

#include <cctype>

#include <openssl/evp.h>

namespace tandem {

std::string normalised_answer(std::string_view text) {
  std::string lower;
  lower.reserve(text.size());
  for (unsigned char c : text) {
    lower.push_back(static_cast<char>(std::tolower(c)));
  }
  std::string_view answer = lower;
  for (const char* marker : {"####", "answer is", "answer:"}) {
    const size_t at = lower.rfind(marker);
    if (at != std::string::npos) {
      answer = std::string_view(lower).substr(at + std::char_traits<char>::length(marker));
      break;
    }
  }
  std::string out;
  for (unsigned char c : answer) {
    if (std::isalnum(c) != 0) {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

std::string answer_hash(std::string_view text) {
  const std::string normalised = normalised_answer(text);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(normalised.data(), normalised.size(), digest, &length, EVP_sha256(), nullptr);
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kDigits[digest[i] >> 4]);
    out.push_back(kDigits[digest[i] & 0xf]);
  }
  return out;
}

}  // namespace tandem
