#include "engine/chat_template.h"

#include <gtest/gtest.h>

namespace tandem::engine {
namespace {

TEST(ChatTemplateTest, PlainTemplateKeepsASingleUserMessageVerbatim) {
  auto tmpl = ChatTemplate::from_model(std::nullopt);
  EXPECT_EQ(tmpl.kind(), "plain");
  EXPECT_FALSE(tmpl.needs_special_parsing());
  auto text = tmpl.render({{"user", "Once upon a time"}});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text.value(), "Once upon a time");
}

TEST(ChatTemplateTest, PlainTemplatePutsTheSystemTextFirst) {
  auto tmpl = ChatTemplate::from_model(std::nullopt);
  auto text = tmpl.render({{"system", "Be kind."}, {"user", "Hi"}});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text.value(), "Be kind.\n\nHi");
}

TEST(ChatTemplateTest, PlainTemplateWritesATranscriptForConversations) {
  auto tmpl = ChatTemplate::from_model(std::nullopt);
  auto text = tmpl.render({{"user", "Hi"}, {"assistant", "Hello"}, {"user", "Tell a story"}});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text.value(), "User: Hi\n\nAssistant: Hello\n\nUser: Tell a story\n\nAssistant:");
}

TEST(ChatTemplateTest, RejectsUnknownRolesAndEmptyConversations) {
  auto tmpl = ChatTemplate::from_model(std::nullopt);
  auto bad = tmpl.render({{"user", "a"}, {"wizard", "b"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.error().message.find("messages[1].role 'wizard'"), std::string::npos);
  EXPECT_FALSE(tmpl.render({}).ok());
}

TEST(ChatTemplateTest, UsesAModelTemplateLlamaCppRecognises) {
  // A ChatML template, as Qwen and many others ship it.
  const std::string chatml =
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
      "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
      "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
  auto tmpl = ChatTemplate::from_model(chatml);
  EXPECT_EQ(tmpl.kind(), "model");
  EXPECT_TRUE(tmpl.needs_special_parsing());
  auto text = tmpl.render({{"developer", "S"}, {"user", "U"}});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text.value(),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ChatTemplateTest, FallsBackToPlainForTemplatesLlamaCppCannotApply) {
  auto tmpl = ChatTemplate::from_model(std::string("{{ something no engine knows }}"));
  EXPECT_EQ(tmpl.kind(), "plain");
}

}  // namespace
}  // namespace tandem::engine
