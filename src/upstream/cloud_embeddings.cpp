// An upstream's answer to POST /embeddings, read and checked before anything of it reaches a
// client: a vector store that receives a wrong count of vectors, vectors out of order or of
// mixed lengths is corrupted silently, so every such answer is a malformed reply instead.

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <openssl/evp.h>

#include "common/json_depth.h"
#include "common/json_kind.h"
#include "upstream/upstream.h"

namespace tandem::upstream {
namespace {

using nlohmann::json;

Error malformed(const std::string& what) {
  return make_error(ErrorCode::kInternal,
                    "the upstream sent a malformed embeddings answer: " + what);
}

// A list of numbers, each finite and within float32's range (what OpenAI's vectors are).
bool read_floats(const json& list, std::vector<double>& out) {
  out.reserve(list.size());
  for (const auto& x : list) {
    if (!x.is_number()) {
      return false;
    }
    const double value = x.get<double>();
    if (!std::isfinite(value) || std::fabs(value) > FLT_MAX) {
      return false;
    }
    out.push_back(value);
  }
  return !out.empty();
}

// Base64 of little-endian float32 values (OpenAI's encoding_format "base64").
bool read_base64_floats(const std::string& text, std::vector<double>& out) {
  if (text.empty() || text.size() % 4 != 0) {
    return false;
  }
  std::string bytes(text.size() / 4 * 3, '\0');
  const int decoded = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                                      reinterpret_cast<const unsigned char*>(text.data()),
                                      static_cast<int>(text.size()));
  if (decoded < 0) {
    return false;
  }
  // EVP_DecodeBlock counts the padding as decoded zero bytes.
  size_t size = static_cast<size_t>(decoded);
  for (size_t i = text.size(); i > 0 && text[i - 1] == '=' && size > 0; --i) {
    --size;
  }
  if (size == 0 || size % sizeof(float) != 0) {
    return false;
  }
  out.resize(size / sizeof(float));
  for (size_t i = 0; i < out.size(); ++i) {
    float value = 0.0F;
    std::memcpy(&value, bytes.data() + i * sizeof(float), sizeof(float));
    if (!std::isfinite(value)) {
      return false;
    }
    out[i] = value;
  }
  return true;
}

// usage.prompt_tokens: 0 when the upstream reports no usage (absent or null, as some servers
// answer), and 0 with a note in `problem` when it is not a count. A malformed usage is not worth
// refusing vectors over (as for chat answers); the caller logs it.
int prompt_tokens_of(const json& answer, std::string& problem) {
  const auto usage = answer.find("usage");
  if (usage == answer.end() || usage->is_null()) {
    return 0;
  }
  if (!usage->is_object()) {
    problem = "usage is " + json_kind(*usage);
    return 0;
  }
  const auto tokens = usage->find("prompt_tokens");
  if (tokens == usage->end()) {
    return 0;
  }
  if (tokens->is_number_integer()) {
    const auto value = tokens->get<int64_t>();
    if (value >= 0 && value <= INT32_MAX) {
      return static_cast<int>(value);
    }
    problem = "usage.prompt_tokens is " + std::to_string(value);
    return 0;
  }
  problem = "usage.prompt_tokens is " + json_kind(*tokens);
  return 0;
}

}  // namespace

Result<CloudEmbeddings> parse_cloud_embeddings(const std::string& body, size_t inputs) {
  if (json_nesting_depth(body) > kMaxJsonDepth) {
    return malformed("it nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  const json answer = json::parse(body, nullptr, false);
  if (answer.is_discarded() || !answer.is_object()) {
    return malformed("it is not a JSON object: '" + body.substr(0, 80) + "'");
  }
  if (const auto error = answer.find("error"); error != answer.end() && !error->is_null()) {
    std::string message = "an error object";
    if (error->is_object() && error->contains("message") && (*error)["message"].is_string()) {
      message = (*error)["message"].get<std::string>();
    }
    return make_error(ErrorCode::kInternal, "the upstream answered with an error: " + message);
  }
  const auto data = answer.find("data");
  if (data == answer.end() || !data->is_array()) {
    return malformed(data == answer.end() ? "it has no data" : "data is " + json_kind(*data));
  }
  if (data->size() != inputs) {
    return malformed("data holds " + std::to_string(data->size()) + " vectors for " +
                     std::to_string(inputs) + " inputs");
  }
  CloudEmbeddings out;
  out.vectors.resize(inputs);
  std::vector<bool> seen(inputs, false);
  for (size_t i = 0; i < inputs; ++i) {
    const json& item = (*data)[i];
    const std::string where = "data[" + std::to_string(i) + "]";
    if (!item.is_object()) {
      return malformed(where + " is " + json_kind(item) + ", not an object");
    }
    size_t index = i;
    if (const auto at = item.find("index"); at != item.end() && !at->is_null()) {
      if (!at->is_number_integer() || at->get<int64_t>() < 0 ||
          static_cast<uint64_t>(at->get<int64_t>()) >= inputs) {
        return malformed(where + ".index is not an integer in [0, " + std::to_string(inputs) + ")");
      }
      index = static_cast<size_t>(at->get<int64_t>());
    }
    if (seen[index]) {
      return malformed(where + ".index " + std::to_string(index) + " comes twice");
    }
    seen[index] = true;
    const auto embedding = item.find("embedding");
    if (embedding == item.end()) {
      return malformed(where + " has no embedding");
    }
    std::vector<double>& vector = out.vectors[index];
    if (embedding->is_array()) {
      if (!read_floats(*embedding, vector)) {
        return malformed(where + ".embedding is not a non-empty list of numbers in float range");
      }
    } else if (embedding->is_string()) {
      if (!read_base64_floats(embedding->get<std::string>(), vector)) {
        return malformed(where + ".embedding is not base64 of float32 values");
      }
    } else {
      return malformed(where + ".embedding is " + json_kind(*embedding));
    }
  }
  // Every index was distinct and in range, so every vector is filled.
  for (size_t i = 1; i < inputs; ++i) {
    if (out.vectors[i].size() != out.vectors[0].size()) {
      return malformed("its vectors have different lengths (" +
                       std::to_string(out.vectors[0].size()) + " and " +
                       std::to_string(out.vectors[i].size()) + ")");
    }
  }
  out.prompt_tokens = prompt_tokens_of(answer, out.usage_problem);
  if (const auto model = answer.find("model"); model != answer.end() && model->is_string()) {
    out.model = model->get<std::string>();
  }
  return out;
}

}  // namespace tandem::upstream
