// The OpenAI request bodies of /v1/chat/completions and /v1/completions: the first thing the
// gateway does with a client's JSON.

#include "fuzz/fuzz_targets.h"
#include "fuzz/property_check.h"
#include "fuzz/targets/completion_checks.h"

namespace tandem::fuzz {

void fuzz_openai_body(const uint8_t* data, size_t size) {
  const std::string_view body = as_text(data, size);
  for (const auto kind : {upstream::ApiKind::kChat, upstream::ApiKind::kCompletion}) {
    (void)parse_completion_checked(body, kind, /*default_max_tokens=*/256);
  }
}

}  // namespace tandem::fuzz
