#include "server/edge_options.h"

#include <fstream>
#include <sstream>

namespace tandem::server {

Result<engine::EngineOptions> edge_engine_options(const config::EdgeConfig& edge) {
  engine::EngineOptions options;
  options.model_path = edge.model;
  options.threads = edge.threads;
  options.context_per_sequence = edge.context;
  options.max_sequences = edge.parallel;
  options.max_queued_requests = edge.max_queue;
  options.prompt_cache = edge.prompt_cache;
  options.prompt_cache_bytes = size_t{edge.prompt_cache_mib} << 20;
  // The configuration has checked the name.
  options.embedding_pooling =
      engine::pooling_from_name(edge.embeddings_pooling).value_or(engine::Pooling::kModel);
  if (!edge.chat_template_file.empty()) {
    std::ifstream in(edge.chat_template_file, std::ios::binary);
    std::stringstream text;
    if (in.is_open()) {
      text << in.rdbuf();
    }
    if (text.str().empty()) {
      return make_error(
          ErrorCode::kInvalidArgument,
          "edge.chat_template_file '" + edge.chat_template_file + "' cannot be read or is empty");
    }
    options.chat_template = text.str();
  }
  return options;
}

}  // namespace tandem::server
