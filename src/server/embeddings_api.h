#pragma once
// POST /v1/embeddings: OpenAI's request parsed and validated, and its response built, from the
// edge model's vectors (Engine::embed) or a cloud upstream's (embeddings_tiers.h says which).
//
// Thread-safety: pure functions over plain values.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/engine.h"
#include "server/api_error.h"
#include "upstream/upstream.h"

namespace tandem::server {

struct EmbeddingsRequest {
  std::string model;
  std::vector<engine::EmbeddingInput> inputs;
  bool base64 = false;  // encoding_format: "base64" (little-endian float32), else "float"
  std::optional<int> dimensions;
  std::string user;
  nlohmann::json cloud_body;  // the client's body, forwarded to a cloud upstream
};

// Errors name the field: input (a string, an array of strings, an array of token ids or an
// array of such arrays; nothing empty), encoding_format, dimensions, model, user.
std::variant<EmbeddingsRequest, ApiError> parse_embeddings_request(std::string_view body);

nlohmann::json embeddings_response(const engine::EmbeddingResult& result, const std::string& model,
                                   bool base64);

// A cloud upstream's vectors in OpenAI's shape, encoded as the client asked whatever encoding
// the upstream used; `model` is the name the client asked for, `tandem` the decision record.
nlohmann::json cloud_embeddings_response(const upstream::CloudEmbeddings& answer,
                                         const std::string& model, bool base64,
                                         nlohmann::json tandem);

}  // namespace tandem::server
