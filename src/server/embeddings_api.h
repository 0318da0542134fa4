#pragma once
// POST /v1/embeddings: OpenAI's request parsed and validated, and its response built. The
// vectors come from the edge model (Engine::embed): nothing leaves the device.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/engine.h"
#include "server/api_error.h"

namespace tandem::server {

struct EmbeddingsRequest {
  std::string model;
  std::vector<engine::EmbeddingInput> inputs;
  bool base64 = false;  // encoding_format: "base64" (little-endian float32), else "float"
  std::optional<int> dimensions;
  std::string user;
};

// Errors name the field: input (a string, an array of strings, an array of token ids or an
// array of such arrays; nothing empty), encoding_format, dimensions, model, user.
std::variant<EmbeddingsRequest, ApiError> parse_embeddings_request(std::string_view body);

nlohmann::json embeddings_response(const engine::EmbeddingResult& result, const std::string& model,
                                   bool base64);

}  // namespace tandem::server
