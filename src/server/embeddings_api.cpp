#include "server/embeddings_api.h"

#include <cstring>

#include <openssl/evp.h>

#include "server/request_json.h"

namespace tandem::server {
namespace {

using nlohmann::json;

// Inputs one request may carry (OpenAI allows 2048).
constexpr size_t kMaxInputs = 2048;

std::optional<std::vector<int32_t>> token_array(const json& value) {
  if (!value.is_array() || value.empty()) {
    return std::nullopt;
  }
  std::vector<int32_t> tokens;
  tokens.reserve(value.size());
  for (const auto& item : value) {
    if (!item.is_number_integer()) {
      return std::nullopt;
    }
    const auto id = item.get<int64_t>();
    // Out-of-range ids are the engine's to name (it knows the vocabulary); keep them out of
    // int32 wrap-around here.
    tokens.push_back(id < INT32_MIN || id > INT32_MAX ? -1 : static_cast<int32_t>(id));
  }
  return tokens;
}

engine::EmbeddingInput text_input(const std::string& text) {
  engine::EmbeddingInput input;
  input.text = text;
  return input;
}

engine::EmbeddingInput tokens_input(std::vector<int32_t> tokens) {
  engine::EmbeddingInput input;
  input.tokens = std::move(tokens);
  input.is_tokens = true;
  return input;
}

std::optional<ApiError> parse_input(const json& input, EmbeddingsRequest& out) {
  const ApiError bad = invalid_request(
      "input must be a non-empty string, an array of strings, an array of token ids, or an "
      "array of arrays of token ids",
      "input");
  if (input.is_string()) {
    if (input.get<std::string>().empty()) {
      return invalid_request("input must not be empty", "input");
    }
    out.inputs.push_back(text_input(input.get<std::string>()));
    return std::nullopt;
  }
  if (!input.is_array() || input.empty()) {
    return bad;
  }
  if (input.size() > kMaxInputs) {
    return invalid_request("input holds " + std::to_string(input.size()) + " items; at most " +
                               std::to_string(kMaxInputs),
                           "input");
  }
  if (auto tokens = token_array(input)) {  // one input as token ids
    out.inputs.push_back(tokens_input(std::move(*tokens)));
    return std::nullopt;
  }
  for (size_t i = 0; i < input.size(); ++i) {
    const auto& item = input[i];
    if (item.is_string() && !item.get<std::string>().empty()) {
      out.inputs.push_back(text_input(item.get<std::string>()));
    } else if (auto tokens = token_array(item)) {
      out.inputs.push_back(tokens_input(std::move(*tokens)));
    } else {
      return invalid_request("input[" + std::to_string(i) +
                                 "] must be a non-empty string or a non-empty array of token ids",
                             "input");
    }
  }
  return std::nullopt;
}

std::string base64_floats(const std::vector<float>& vector) {
  if (vector.empty()) {
    return "";
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(vector.data());
  const size_t size = vector.size() * sizeof(float);
  std::string out(4 * ((size + 2) / 3), '\0');
  const int written =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes, static_cast<int>(size));
  out.resize(static_cast<size_t>(std::max(written, 0)));
  return out;
}

}  // namespace

std::variant<EmbeddingsRequest, ApiError> parse_embeddings_request(std::string_view text) {
  const std::variant<json, ApiError> document =
      parse_request_object(text, invalid_request("the request body must be a JSON object"));
  if (const auto* error = std::get_if<ApiError>(&document)) {
    return *error;
  }
  const json& body = std::get<json>(document);
  EmbeddingsRequest out;
  const auto model = body.find("model");
  if (model == body.end() || !model->is_string() || model->get<std::string>().empty()) {
    return invalid_request("model: is required and must be a string", "model");
  }
  out.model = model->get<std::string>();
  out.cloud_body = body;
  const auto input = body.find("input");
  if (input == body.end()) {
    return invalid_request("input: is required", "input");
  }
  if (auto error = parse_input(*input, out)) {
    return *error;
  }
  if (const auto format = body.find("encoding_format");
      format != body.end() && !format->is_null()) {
    if (!format->is_string() || (*format != "float" && *format != "base64")) {
      return invalid_request("encoding_format must be \"float\" or \"base64\"", "encoding_format");
    }
    out.base64 = *format == "base64";
  }
  if (const auto dims = body.find("dimensions"); dims != body.end() && !dims->is_null()) {
    if (!dims->is_number_integer() || dims->get<int64_t>() < 1 || dims->get<int64_t>() > 65536) {
      return invalid_request("dimensions must be a positive integer", "dimensions");
    }
    out.dimensions = static_cast<int>(dims->get<int64_t>());
  }
  if (const auto user = body.find("user"); user != body.end() && !user->is_null()) {
    if (!user->is_string()) {
      return invalid_request("user must be a string", "user");
    }
    out.user = user->get<std::string>();
  }
  return out;
}

json embeddings_response(const engine::EmbeddingResult& result, const std::string& model,
                         bool base64) {
  json data = json::array();
  for (size_t i = 0; i < result.vectors.size(); ++i) {
    json item = {{"object", "embedding"}, {"index", i}};
    if (base64) {
      item["embedding"] = base64_floats(result.vectors[i]);
    } else {
      item["embedding"] = result.vectors[i];
    }
    data.push_back(std::move(item));
  }
  return {
      {"object", "list"},
      {"data", std::move(data)},
      {"model", model},
      {"usage", {{"prompt_tokens", result.prompt_tokens}, {"total_tokens", result.prompt_tokens}}},
      {"tandem", {{"tier", "edge"}, {"pooling", result.pooling}, {"data_left_device", false}}}};
}

json cloud_embeddings_response(const upstream::CloudEmbeddings& answer, const std::string& model,
                               bool base64, json tandem) {
  json data = json::array();
  for (size_t i = 0; i < answer.vectors.size(); ++i) {
    json item = {{"object", "embedding"}, {"index", i}};
    if (base64) {
      // float32, as base64 carries vectors (a JSON number rounds to the nearest float32).
      const std::vector<float> floats(answer.vectors[i].begin(), answer.vectors[i].end());
      item["embedding"] = base64_floats(floats);
    } else {
      item["embedding"] = answer.vectors[i];
    }
    data.push_back(std::move(item));
  }
  return {
      {"object", "list"},
      {"data", std::move(data)},
      {"model", model},
      {"usage", {{"prompt_tokens", answer.prompt_tokens}, {"total_tokens", answer.prompt_tokens}}},
      {"tandem", std::move(tandem)}};
}

}  // namespace tandem::server
