#include "config/config_editor.h"

#include <gtest/gtest.h>

#include "config/config.h"

namespace tandem::config {
namespace {

std::string edit(const std::string& text, std::vector<ConfigEdit> edits) {
  auto out = apply_edits(text, edits, "c.yaml");
  EXPECT_TRUE(out) << (out ? "" : out.error().message);
  return out ? out.value() : "";
}

TEST(ConfigEditor, ReplacesAValueAndKeepsCommentsAndOrder) {
  const std::string text =
      "# the gateway\n"
      "server:\n"
      "  port: 8080   # public port\n"
      "routing:\n"
      "  pattern: cascade\n"
      "  cascade:\n"
      "    threshold: 0.5 # tuned by hand\n"
      "    min_tokens: 4\n";
  const std::string out = edit(text, {{{"routing", "cascade", "threshold"}, "0.42"}});
  EXPECT_EQ(out,
            "# the gateway\n"
            "server:\n"
            "  port: 8080   # public port\n"
            "routing:\n"
            "  pattern: cascade\n"
            "  cascade:\n"
            "    threshold: 0.42 # tuned by hand\n"
            "    min_tokens: 4\n");
}

TEST(ConfigEditor, AddsMissingKeysAtTheEndOfTheirBlock) {
  const std::string text =
      "routing:\n"
      "  cascade:\n"
      "    min_tokens: 4\n"
      "\n"
      "  # consistency memory\n"
      "  consistency:\n"
      "    ttl_s: 60\n"
      "server:\n"
      "  port: 9000\n";
  const std::string out = edit(text, {{{"routing", "cascade", "threshold"}, "0.3"},
                                      {{"routing", "cascade", "kinds", "math", "threshold"}, "0.7"},
                                      {{"edge", "threads"}, "2"}});
  EXPECT_EQ(out,
            "routing:\n"
            "  cascade:\n"
            "    min_tokens: 4\n"
            "    threshold: 0.3\n"
            "    kinds:\n"
            "      math:\n"
            "        threshold: 0.7\n"
            "\n"
            "  # consistency memory\n"
            "  consistency:\n"
            "    ttl_s: 60\n"
            "server:\n"
            "  port: 9000\n"
            "edge:\n"
            "  threads: 2\n");
  EXPECT_TRUE(parse_config(out, "c.yaml"));
}

TEST(ConfigEditor, FillsAnEmptyKeyAndAnEmptyFile) {
  EXPECT_EQ(edit("routing:\n  cascade:\n", {{{"routing", "cascade", "threshold"}, "0.3"}}),
            "routing:\n  cascade:\n    threshold: 0.3\n");
  EXPECT_EQ(edit("routing:\n  cascade: ~\n", {{{"routing", "cascade", "threshold"}, "0.3"}}),
            "routing:\n  cascade:\n    threshold: 0.3\n");
  EXPECT_EQ(edit("", {{{"routing", "cascade", "threshold"}, "0.3"}}),
            "routing:\n  cascade:\n    threshold: 0.3\n");
  EXPECT_EQ(edit("server:\n  port: 1", {{{"routing", "pattern"}, "cascade"}}),
            "server:\n  port: 1\nrouting:\n  pattern: cascade\n");
}

// Found by the yaml_config fuzz target: keys added at the top level went after the
// "..." end marker, into a second document that nothing reads, so calibration did nothing.
TEST(ConfigEditor, AddsTopLevelKeysInsideTheFirstDocument) {
  const std::string out =
      edit("%YAML 1.2\n---\nserver:\n  port: 1\n...\n", {{{"routing", "pattern"}, "cascade"}});
  EXPECT_EQ(out, "%YAML 1.2\n---\nserver:\n  port: 1\nrouting:\n  pattern: cascade\n...\n");
  auto config = parse_config(out, "c.yaml");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->routing.pattern, "cascade");
  EXPECT_EQ(edit("a: 1\n---\nb: 2\n", {{{"edge", "threads"}, "2"}}),
            "a: 1\nedge:\n  threads: 2\n---\nb: 2\n");
}

// Found by the yaml_config fuzz target: yaml-cpp reads "#\0..." as UTF-16, so edits appended as
// UTF-8 were never read back and calibration silently did nothing.
TEST(ConfigEditor, RefusesTextThatIsNotUtf8) {
  auto edited = apply_edits(std::string("routing:\n  pattern: cascade\n#\0", 30),
                            {{{"routing", "pattern"}, "edge"}}, "c.yaml");
  ASSERT_FALSE(edited);
  EXPECT_EQ(edited.error().message,
            "c.yaml:3: holds a NUL byte: only UTF-8 text can be edited (is the file UTF-16?)");
}

// Found by the yaml_config fuzz target: yaml-cpp lets a quote run to the end of the file, so the
// lines added after it were part of a string, and the edit was reported as done.
TEST(ConfigEditor, RefusesAnEditThatDoesNotReadBack) {
  auto edited =
      apply_edits("edge:\n  name: 'tandem\n", {{{"routing", "pattern"}, "edge"}}, "c.yaml");
  ASSERT_FALSE(edited);
  EXPECT_EQ(edited.error().message,
            "c.yaml: routing.pattern: the edited file does not read back with the new value; edit "
            "it by hand");
}

TEST(ConfigEditor, RefusesWhatItCannotEditSafely) {
  auto flow = apply_edits("routing:\n  cascade: {threshold: 0.5}\n",
                          {{{"routing", "cascade", "threshold"}, "0.3"}}, "c.yaml");
  ASSERT_FALSE(flow);
  EXPECT_NE(flow.error().message.find("c.yaml:2"), std::string::npos);
  EXPECT_NE(flow.error().message.find("flow-style"), std::string::npos);

  auto mapping = apply_edits("routing:\n  cascade:\n    threshold: 1\n",
                             {{{"routing", "cascade"}, "0.3"}}, "c.yaml");
  ASSERT_FALSE(mapping);
  EXPECT_NE(mapping.error().message.find("routing.cascade: holds a mapping"), std::string::npos);

  auto scalar =
      apply_edits("routing: 3\n", {{{"routing", "cascade", "threshold"}, "0.3"}}, "c.yaml");
  ASSERT_FALSE(scalar);
  EXPECT_NE(scalar.error().message.find("holds a value"), std::string::npos);

  auto broken = apply_edits("routing: [\n", {{{"routing", "x"}, "1"}}, "c.yaml");
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message.find("not valid YAML"), std::string::npos);
}

}  // namespace
}  // namespace tandem::config
