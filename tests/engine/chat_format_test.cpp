// Chat formatting through llama.cpp's common library, on the derived test models (real
// tokenizers and chat templates, random weights) and the shipped model (no template): rendered
// prompts, tool calls read back out of the answer, and constrained decoding that always gives
// schema-shaped JSON whatever the weights.

#include "engine/chat_format.h"

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/test_models.h"
#include "engine/engine.h"
#include "engine/generate.h"
#include "test_files.h"

namespace tandem::engine {
namespace {

using nlohmann::json;

std::unique_ptr<Engine> open_model(const std::string& path) {
  EngineOptions options;
  options.model_path = path;
  options.max_sequences = 1;
  options.context_per_sequence = 2048;
  options.threads = 1;
  auto opened = Engine::open(options);
  EXPECT_TRUE(opened.ok()) << opened.error().message;
  return opened.ok() ? std::move(opened).value() : nullptr;
}

ChatRequest weather_request() {
  ChatRequest request;
  request.messages = {{"user", "What is the weather in Paris?"}};
  request.tools = {{"get_weather", "Current weather of a city",
                    R"({"type":"object","properties":{"city":{"type":"string"}},)"
                    R"("required":["city"]})"}};
  return request;
}

// Generates greedily with the formatted chat and parses the answer as the gateway does.
struct Answer {
  std::string content;
  std::vector<ToolCall> calls;
  CompletionSummary summary;
};

Answer answer(Engine& engine, const FormattedChat& chat, int max_tokens) {
  GenerationRequest request;
  request.prompt = chat.prompt;
  request.parse_special = chat.parse_special;
  request.constraint = chat.constraint;
  request.sampling.temperature = 0.0F;
  request.sampling.max_tokens = max_tokens;
  request.sampling.stop = chat.stops;
  ChatOutput output(chat.output);
  Answer out;
  std::vector<MessageDelta> deltas;
  auto result = generate(engine, request, [&](const TokenEvent& event) {
    for (auto& delta : output.push(event.text)) {
      deltas.push_back(std::move(delta));
    }
  });
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
  for (auto& delta : output.finish()) {
    deltas.push_back(std::move(delta));
  }
  for (const auto& delta : deltas) {
    out.content += delta.content;
    if (delta.tool_index) {
      if (*delta.tool_index == out.calls.size()) {
        out.calls.push_back(delta.tool_call);
      } else {
        out.calls.at(*delta.tool_index).arguments += delta.tool_call.arguments;
      }
    }
  }
  if (result.ok()) {
    out.summary = result->summary;
  }
  return out;
}

TEST(ChatFormatTest, TheModelsJinjaTemplateRendersToolsAndToolResults) {
  auto engine = open_model(test::derived_model("qwen3-tiny.gguf"));
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->chat_format_kind(), "jinja");
  ChatRequest request = weather_request();
  ChatMessage call("assistant", "");
  call.tool_calls = {{"call_1", "get_weather", R"({"city":"Paris"})"}};
  ChatMessage result("tool", R"({"temperature_c":18})");
  result.tool_call_id = "call_1";
  request.messages.push_back(call);
  request.messages.push_back(result);
  auto chat = engine->format_chat(request);
  ASSERT_TRUE(chat.ok()) << chat.error().message;
  EXPECT_NE(chat->prompt.find("<|im_start|>user\nWhat is the weather in Paris?<|im_end|>"),
            std::string::npos)
      << chat->prompt;
  EXPECT_NE(chat->prompt.find("get_weather"), std::string::npos);
  EXPECT_NE(chat->prompt.find("<tool_call>"), std::string::npos);
  EXPECT_NE(chat->prompt.find("<tool_response>"), std::string::npos);
  EXPECT_NE(chat->prompt.find("temperature_c"), std::string::npos);
  EXPECT_TRUE(chat->parse_special);
  EXPECT_NE(chat->output, nullptr);
}

// The shipped model has no template: its tool calls use the generic JSON format, constrained
// by a grammar made from the tools' schemas, so even a story model calls the tool correctly.
TEST(ChatFormatTest, ARequiredToolCallIsAlwaysParsedWithSchemaShapedArguments) {
  auto engine = open_model(test::model_path());
  ASSERT_NE(engine, nullptr);
  ChatRequest request = weather_request();
  request.tool_choice = ToolChoice::kRequired;
  auto chat = engine->format_chat(request);
  ASSERT_TRUE(chat.ok()) << chat.error().message;
  EXPECT_EQ(chat->format, "generic");
  EXPECT_NE(chat->prompt.find("get_weather"), std::string::npos) << chat->prompt;
  EXPECT_FALSE(chat->constraint.grammar.empty());
  const Answer got = answer(*engine, *chat, 200);
  ASSERT_EQ(got.calls.size(), 1U) << got.content;
  EXPECT_EQ(got.calls[0].name, "get_weather");
  EXPECT_EQ(got.calls[0].id.rfind("call_", 0), 0U);
  const json arguments = json::parse(got.calls[0].arguments, nullptr, false);
  ASSERT_TRUE(arguments.is_object()) << got.calls[0].arguments;
  EXPECT_TRUE(arguments["city"].is_string()) << got.calls[0].arguments;
}

TEST(ChatFormatTest, AnAutoToolChoiceMayAnswerOrCallButAlwaysParses) {
  auto engine = open_model(test::model_path());
  ASSERT_NE(engine, nullptr);
  auto chat = engine->format_chat(weather_request());
  ASSERT_TRUE(chat.ok()) << chat.error().message;
  const Answer got = answer(*engine, *chat, 200);
  EXPECT_TRUE(got.calls.size() == 1 || !got.content.empty());
  EXPECT_EQ(got.content.find("{\"response\""), std::string::npos) << got.content;
}

// An answer cut off by max_tokens never shows the generic format's JSON as text.
TEST(ChatFormatTest, ACutOffGenericAnswerKeepsOnlyItsResponseText) {
  auto engine = open_model(test::model_path());
  ASSERT_NE(engine, nullptr);
  auto chat = engine->format_chat(weather_request());
  ASSERT_TRUE(chat.ok()) << chat.error().message;
  const auto read = [&](const std::string& text) {
    ChatOutput output(chat->output);
    std::string content;
    size_t calls = 0;
    for (auto& delta : output.push(text)) {
      content += delta.content;
    }
    for (auto& delta : output.finish()) {
      content += delta.content;
      calls += delta.tool_index ? 1 : 0;
    }
    return std::make_pair(content, calls);
  };
  EXPECT_EQ(read(R"({ "tool_calls" : [ { "name": "get_wea)"),
            std::make_pair(std::string(), size_t{0}));
  EXPECT_EQ(read(R"({"response": "It is sunny in Par)").first, "It is sunny in Par");
  EXPECT_EQ(read(R"({"response": "Line\nnext \u00e9 and \u00)").first, "Line\nnext \u00e9 and ");
  EXPECT_EQ(read(R"({"response": "Done."})").first, "Done.");
}

// The generic format streams too: the response's text and a call's arguments come out as the
// model writes them, a call once its name is whole, and the pieces add up to the answer.
TEST(ChatFormatTest, AGenericAnswerStreamsAsItIsWritten) {
  auto engine = open_model(test::model_path());
  ASSERT_NE(engine, nullptr);
  auto chat = engine->format_chat(weather_request());
  ASSERT_TRUE(chat.ok()) << chat.error().message;
  struct Streamed {
    std::string content;
    std::vector<ToolCall> calls;
    size_t deltas_before_finish = 0;
    size_t argument_deltas = 0;
  };
  const auto stream = [&](const std::string& text) {
    ChatOutput output(chat->output);
    Streamed got;
    auto collect = [&](const std::vector<MessageDelta>& deltas) {
      for (const auto& delta : deltas) {
        got.content += delta.content;
        if (delta.tool_index && *delta.tool_index == got.calls.size()) {
          EXPECT_FALSE(delta.tool_call.name.empty());
          got.calls.push_back(delta.tool_call);
        } else if (delta.tool_index) {
          got.calls.at(*delta.tool_index).arguments += delta.tool_call.arguments;
          ++got.argument_deltas;
        }
      }
    };
    for (size_t i = 0; i < text.size(); i += 3) {
      const auto deltas = output.push(text.substr(i, 3));
      got.deltas_before_finish += deltas.size();
      collect(deltas);
    }
    collect(output.finish());
    return got;
  };
  const auto said = stream(R"({"response": "It is sunny \"today\" in Paris."})");
  EXPECT_EQ(said.content, "It is sunny \"today\" in Paris.");
  EXPECT_GT(said.deltas_before_finish, 5U);
  EXPECT_TRUE(said.calls.empty());

  const auto called = stream(
      R"({"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}},)"
      R"( {"name": "get_weather", "arguments": {"city": "Lyon"}}]})");
  EXPECT_EQ(called.content, "");
  ASSERT_EQ(called.calls.size(), 2U);
  EXPECT_EQ(called.calls[0].name, "get_weather");
  EXPECT_EQ(json::parse(called.calls[0].arguments), json({{"city", "Paris"}, {"days", 3}}));
  EXPECT_EQ(json::parse(called.calls[1].arguments), json({{"city", "Lyon"}}));
  EXPECT_GT(called.argument_deltas, 5U);  // the arguments came in pieces, not at the end
  EXPECT_NE(called.calls[0].id, called.calls[1].id);
}

// Qwen 3's own format, read back by llama.cpp's parser for that template: streamed in small
// pieces, the deltas add up to the call (random weights cannot be relied on to write one).
TEST(ChatFormatTest, TheTemplatesParserReadsToolCallsAsTheyStream) {
  auto engine = open_model(test::derived_model("qwen3-tiny.gguf"));
  ASSERT_NE(engine, nullptr);
  auto chat = engine->format_chat(weather_request());
  ASSERT_TRUE(chat.ok()) << chat.error().message;
  EXPECT_TRUE(chat->constraint.lazy);
  const std::string text =
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
      "{\"city\": \"Paris\"}}\n</tool_call>";
  ChatOutput output(chat->output);
  std::string content;
  std::vector<ToolCall> calls;
  auto collect = [&](const std::vector<MessageDelta>& deltas) {
    for (const auto& delta : deltas) {
      content += delta.content;
      if (delta.tool_index && *delta.tool_index == calls.size()) {
        calls.push_back(delta.tool_call);
      } else if (delta.tool_index) {
        calls.at(*delta.tool_index).arguments += delta.tool_call.arguments;
      }
    }
  };
  for (size_t i = 0; i < text.size(); i += 3) {
    collect(output.push(text.substr(i, 3)));
  }
  collect(output.finish());
  EXPECT_EQ(content.find("Let me check."), 0U) << content;
  ASSERT_EQ(calls.size(), 1U);
  EXPECT_EQ(calls[0].name, "get_weather");
  EXPECT_EQ(json::parse(calls[0].arguments), json({{"city", "Paris"}})) << calls[0].arguments;
  EXPECT_EQ(output.tool_calls(), 1U);
}

TEST(ChatFormatTest, AJsonSchemaConstrainsTheAnswerOnTheShippedModel) {
  auto engine = open_model(test::model_path());
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->chat_format_kind(), "plain");
  ChatRequest request;
  request.messages = {{"user", "Give me a name and an age."}};
  request.json_schema =
      R"({"type":"object","properties":{"name":{"type":"string","maxLength":12},)"
      R"("age":{"type":"integer"}},"required":["name","age"],"additionalProperties":false})";
  auto chat = engine->format_chat(request);
  ASSERT_TRUE(chat.ok()) << chat.error().message;
  EXPECT_EQ(chat->prompt, "Give me a name and an age.");  // still the plain template
  const Answer got = answer(*engine, *chat, 120);
  const json value = json::parse(got.content, nullptr, false);
  ASSERT_TRUE(value.is_object()) << got.content;
  EXPECT_TRUE(value["name"].is_string()) << got.content;
  EXPECT_TRUE(value["age"].is_number_integer()) << got.content;
  EXPECT_EQ(value.size(), 2U) << got.content;
}

TEST(ChatFormatTest, ASchemaLlamaCppCannotConvertIsAClearError) {
  auto engine = open_model(test::model_path());
  ASSERT_NE(engine, nullptr);
  ChatRequest request;
  request.messages = {{"user", "hi"}};
  request.json_schema = R"({"type":"object","properties":{"a":{"$ref":"#/nowhere"}}})";
  auto chat = engine->format_chat(request);
  ASSERT_FALSE(chat.ok());
  EXPECT_EQ(chat.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(chat.error().message.find("schema"), std::string::npos) << chat.error().message;
}

TEST(ChatFormatTest, PlainChatsOnTheShippedModelAreUnchanged) {
  auto engine = open_model(test::model_path());
  ASSERT_NE(engine, nullptr);
  ChatRequest request;
  request.messages = {{"user", "Once upon a time"}};
  auto chat = engine->format_chat(request);
  ASSERT_TRUE(chat.ok());
  EXPECT_EQ(chat->prompt, "Once upon a time");
  EXPECT_EQ(chat->output, nullptr);
  EXPECT_TRUE(chat->constraint.empty());
}

}  // namespace
}  // namespace tandem::engine
