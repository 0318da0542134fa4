#include "routing/privacy_scanner.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "routing/privacy_memo.h"

namespace tandem::routing {
namespace {

// The configured rules the golden cases assume (see privacy_cases.jsonl).
PrivacyRules golden_rules() {
  PrivacyRules rules;
  rules.patterns = {{"employee_id", "EMP-[0-9]{6}"}};
  rules.keyword_lists = {{"medical", {"diagnosis", "HIV", "chemotherapy", "艾滋病"}},
                         {"finance", {"salary", "bank statement"}}};
  return rules;
}

PrivacyScanner golden_scanner() {
  Result<PrivacyScanner> scanner = PrivacyScanner::create(golden_rules());
  EXPECT_TRUE(scanner.ok()) << (scanner.ok() ? "" : scanner.error().message);
  return std::move(scanner).value();
}

struct GoldenCase {
  std::string name;
  std::string text;
  std::vector<std::pair<std::string, std::string>> expect;  // detector, original substring
};

std::vector<GoldenCase> load_cases() {
  const std::string path =
      std::string(TANDEM_SOURCE_DIR) + "/tests/routing/privacy_cases/privacy_cases.jsonl";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::vector<GoldenCase> cases;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    const nlohmann::json json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) {
      ADD_FAILURE() << path << ":" << number << ": not JSON";
      continue;
    }
    GoldenCase c{json.value("name", ""), json.value("text", ""), {}};
    for (const auto& expected : json.at("expect")) {
      c.expect.emplace_back(expected.at(0).get<std::string>(), expected.at(1).get<std::string>());
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

// ASCII and full-width (U+FF10-FF19) digits, as ASCII.
std::string digits_of(std::string_view s) {
  std::string digits;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] >= '0' && s[k] <= '9') {
      digits.push_back(s[k]);
    } else if (s.substr(k, 2) == "\xEF\xBC" && k + 2 < s.size() &&
               static_cast<unsigned char>(s[k + 2]) >= 0x90 &&
               static_cast<unsigned char>(s[k + 2]) <= 0x99) {
      digits.push_back(static_cast<char>('0' + (static_cast<unsigned char>(s[k + 2]) - 0x90)));
      k += 2;
    }
  }
  return digits;
}

// A hint shows at most the last 4 digits of the value, and those only as its last digits.
void expect_safe_mask(const PrivacyFinding& finding, std::string_view value) {
  const std::string shown = digits_of(finding.masked);
  const std::string hidden = digits_of(value);
  EXPECT_LE(shown.size(), 4u) << finding.detector << " masked '" << finding.masked << "'";
  if (!shown.empty()) {
    ASSERT_GE(hidden.size(), shown.size());
    EXPECT_EQ(hidden.substr(hidden.size() - shown.size()), shown) << finding.masked;
  }
  if (value.size() > 4) {
    EXPECT_EQ(finding.masked.find(value), std::string::npos) << finding.masked;
  }
}

TEST(PrivacyGolden, EveryCaseFindsExactlyWhatItExpects) {
  const PrivacyScanner scanner = golden_scanner();
  const std::vector<GoldenCase> cases = load_cases();
  EXPECT_GE(cases.size(), 80u);
  for (const GoldenCase& c : cases) {
    SCOPED_TRACE("case '" + c.name + "': " + c.text);
    const std::vector<PrivacyFinding> findings = scanner.scan(c.text);
    std::vector<std::pair<std::string, std::string>> found;
    for (const PrivacyFinding& finding : findings) {
      ASSERT_LE(finding.offset + finding.length, c.text.size());
      const std::string value = c.text.substr(finding.offset, finding.length);
      found.emplace_back(finding.detector, value);
      expect_safe_mask(finding, value);
    }
    EXPECT_EQ(found, c.expect);
    const std::optional<PrivacyFinding> first = scanner.first(c.text);
    if (findings.empty()) {
      EXPECT_FALSE(first.has_value());
    } else {
      ASSERT_TRUE(first.has_value());
      EXPECT_EQ(*first, findings.front());
    }
  }
}

TEST(PrivacyGolden, CasesCoverEveryDetectorAndNearMisses) {
  size_t near_misses = 0;
  std::set<std::string> detectors;
  for (const GoldenCase& c : load_cases()) {
    near_misses += c.expect.empty() ? 1 : 0;
    for (const auto& [detector, value] : c.expect) {
      detectors.insert(detector);
    }
  }
  for (const std::string& builtin : PrivacyScanner::builtin_detectors()) {
    EXPECT_TRUE(detectors.count(builtin)) << builtin << " has no positive case";
  }
  EXPECT_TRUE(detectors.count("pattern:employee_id"));
  EXPECT_TRUE(detectors.count("keyword:medical"));
  EXPECT_GE(near_misses, 30u);
}

TEST(PrivacyScanner, BuiltinDetectorNames) {
  EXPECT_EQ(PrivacyScanner::builtin_detectors(),
            (std::vector<std::string>{"email", "phone", "payment_card", "us_ssn", "cn_resident_id",
                                      "iban", "ip_address", "credential"}));
}

TEST(PrivacyScanner, ReportsOffsetsInTheOriginalText) {
  const std::string text = "ｍｙ ｃａｒｄ: ４１１１\u200b１１１１ １１１１ １１１１!";
  const std::vector<PrivacyFinding> findings = PrivacyScanner().scan(text);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].detector, "payment_card");
  EXPECT_EQ(text.substr(findings[0].offset, findings[0].length),
            "４１１１\u200b１１１１ １１１１ １１１１");
  EXPECT_EQ(findings[0].masked, "****1111");
}

TEST(PrivacyScanner, MasksNeverShowMoreThanTheLastFourDigits) {
  const std::string text =
      "4111111111111111 123-45-6789 11010519491231002X DE89370400440532013000 "
      "+44 20 7946 0958 81.2.69.160 2a00:1450:4001:81c::200e john99@example.com password=hunter22!";
  const std::vector<PrivacyFinding> findings = PrivacyScanner().scan(text);
  ASSERT_EQ(findings.size(), 9u);
  for (const PrivacyFinding& finding : findings) {
    expect_safe_mask(finding, std::string_view(text).substr(finding.offset, finding.length));
  }
  EXPECT_EQ(findings[0].masked, "****1111");
  EXPECT_EQ(findings[1].masked, "***-**-6789");
  EXPECT_EQ(findings[2].masked, "****002X");
  EXPECT_EQ(findings[3].masked, "DE****3000");
  EXPECT_EQ(findings[7].masked, "***@***.com");
  EXPECT_EQ(findings[8].masked, "secret_assignment");
}

TEST(PrivacyPatterns, ConfiguredPatternsAreReportedByName) {
  PrivacyRules rules;
  rules.patterns = {{"ticket", "TCK-[0-9]{4}"}, {"codename", "(?i)project\\s+falcon"}};
  Result<PrivacyScanner> scanner = PrivacyScanner::create(rules);
  ASSERT_TRUE(scanner.ok()) << scanner.error().message;
  const std::vector<PrivacyFinding> findings =
      scanner->scan("PROJECT  Falcon ships TCK-1234 and TCK-5678");
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0].detector, "pattern:codename");
  EXPECT_EQ(findings[1].detector, "pattern:ticket");
  EXPECT_EQ(findings[1].offset, 22u);
  EXPECT_EQ(findings[1].length, 8u);
  EXPECT_EQ(findings[2].detector, "pattern:ticket");
  EXPECT_EQ(findings[0].masked, "***");
  EXPECT_TRUE(scanner->scan("nothing to see").empty());
}

TEST(PrivacyPatterns, ManyPatternsArePrefilteredTogether) {
  // From eight patterns on, one RE2::Set pass decides which patterns run at all.
  PrivacyRules rules;
  for (int k = 0; k < 9; ++k) {
    rules.patterns.push_back({"p" + std::to_string(k), "ID" + std::to_string(k) + "-[0-9]{3}"});
  }
  Result<PrivacyScanner> scanner = PrivacyScanner::create(rules);
  ASSERT_TRUE(scanner.ok()) << scanner.error().message;
  const std::vector<PrivacyFinding> findings = scanner->scan("ID8-123, ID3-456 and ID3-789");
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0].detector, "pattern:p8");
  EXPECT_EQ(findings[1].detector, "pattern:p3");
  EXPECT_EQ(findings[2].detector, "pattern:p3");
  EXPECT_EQ(scanner->first("ID8-123, ID3-456"), findings[0]);
  EXPECT_TRUE(scanner->scan("ID9-000").empty());
}

TEST(PrivacyPatterns, ABadRegexFailsNamingThePattern) {
  PrivacyRules rules;
  rules.patterns = {{"good", "abc"}, {"broken_one", "(unclosed"}};
  Result<PrivacyScanner> scanner = PrivacyScanner::create(rules);
  ASSERT_FALSE(scanner.ok());
  EXPECT_EQ(scanner.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(scanner.error().message.find("broken_one"), std::string::npos)
      << scanner.error().message;
}

TEST(PrivacyPatterns, RejectsBackreferencesEmptyMatchesAndBadNames) {
  const auto error_for = [](std::vector<PrivacyPattern> patterns) {
    PrivacyRules rules;
    rules.patterns = std::move(patterns);
    Result<PrivacyScanner> scanner = PrivacyScanner::create(rules);
    return scanner.ok() ? std::string() : scanner.error().message;
  };
  EXPECT_NE(error_for({{"repeat", "(a)\\1"}}).find("repeat"), std::string::npos);
  EXPECT_NE(error_for({{"anything", "x*"}}).find("empty string"), std::string::npos);
  EXPECT_NE(error_for({{"", "abc"}}).find("no name"), std::string::npos);
  EXPECT_NE(error_for({{"twice", "a"}, {"twice", "b"}}).find("twice"), std::string::npos);
}

TEST(PrivacyKeywords, WholeWordsForAsciiAndSubstringsForCjk) {
  PrivacyRules rules;
  rules.keyword_lists = {{"medical", {"HIV", "diagnosis", "癌症"}}, {"legal", {"lawsuit"}}};
  Result<PrivacyScanner> scanner = PrivacyScanner::create(rules);
  ASSERT_TRUE(scanner.ok()) << scanner.error().message;
  EXPECT_TRUE(scanner->scan("ARCHIVE of diagnoses, lawsuits").empty());
  const std::string text = "hiv, Diagnosis; 她得了癌症。A lawsuit";
  const std::vector<PrivacyFinding> findings = scanner->scan(text);
  ASSERT_EQ(findings.size(), 4u);
  EXPECT_EQ(findings[0].detector, "keyword:medical");
  EXPECT_EQ(text.substr(findings[0].offset, findings[0].length), "hiv");
  EXPECT_EQ(text.substr(findings[1].offset, findings[1].length), "Diagnosis");
  EXPECT_EQ(text.substr(findings[2].offset, findings[2].length), "癌症");
  EXPECT_EQ(findings[3].detector, "keyword:legal");
  EXPECT_EQ(findings[3].masked, "***");
}

TEST(PrivacyKeywords, EmptyWordsAndListsAreErrors) {
  const auto error_for = [](KeywordList list) {
    PrivacyRules rules;
    rules.keyword_lists = {std::move(list)};
    Result<PrivacyScanner> scanner = PrivacyScanner::create(rules);
    return scanner.ok() ? std::string() : scanner.error().message;
  };
  EXPECT_NE(error_for({"medical", {"HIV", ""}}).find("medical"), std::string::npos);
  EXPECT_NE(error_for({"medical", {"  "}}).find("empty"), std::string::npos);
  EXPECT_NE(error_for({"medical", {"\u200b"}}).find("empty"), std::string::npos);
  EXPECT_NE(error_for({"medical", {}}).find("no words"), std::string::npos);
  EXPECT_NE(error_for({"", {"HIV"}}).find("no name"), std::string::npos);
  EXPECT_EQ(error_for({"odd", {"C++", "a.b", "(x)"}}), "");  // regex syntax is quoted
}

TEST(PrivacyKeywords, SymbolsInWordsAreLiteral) {
  PrivacyRules rules;
  rules.keyword_lists = {{"lang", {"C++", "a.b"}}};
  Result<PrivacyScanner> scanner = PrivacyScanner::create(rules);
  ASSERT_TRUE(scanner.ok());
  EXPECT_EQ(scanner->scan("I write C++ daily").size(), 1u);
  EXPECT_TRUE(scanner->scan("axb").empty());
}

TEST(PrivacyDisabled, DisabledDetectorsAreSilent) {
  PrivacyRules rules;
  rules.disabled_detectors = {"payment_card", "email"};
  Result<PrivacyScanner> scanner = PrivacyScanner::create(rules);
  ASSERT_TRUE(scanner.ok());
  const std::vector<PrivacyFinding> findings =
      scanner->scan("4111 1111 1111 1111 a@b.io SSN 123-45-6789");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].detector, "us_ssn");
}

TEST(PrivacyDisabled, AllBuiltinsOffLeavesOnlyConfiguredRules) {
  PrivacyRules rules = golden_rules();
  rules.disabled_detectors = PrivacyScanner::builtin_detectors();
  Result<PrivacyScanner> scanner = PrivacyScanner::create(rules);
  ASSERT_TRUE(scanner.ok());
  const std::vector<PrivacyFinding> findings =
      scanner->scan("4111111111111111 a@b.io EMP-123456 HIV 10.1.2.3 password=hunter22!");
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].detector, "pattern:employee_id");
  EXPECT_EQ(findings[1].detector, "keyword:medical");
}

TEST(PrivacyDisabled, AnUnknownDetectorIsAnError) {
  PrivacyRules rules;
  rules.disabled_detectors = {"credit_card"};
  Result<PrivacyScanner> scanner = PrivacyScanner::create(rules);
  ASSERT_FALSE(scanner.ok());
  EXPECT_NE(scanner.error().message.find("credit_card"), std::string::npos);
}

TEST(PrivacyFirst, AgreesWithScan) {
  const PrivacyScanner scanner = golden_scanner();
  const std::vector<std::string> texts = {
      "HIV and then 4111 1111 1111 1111",
      "EMP-123456 john@example.com",
      "::ffff:192.168.1.1 is the mapped address",
      "password=4111111111111111",
      "DE89 3704 0044 0532 0130 00",
      std::string("GB82WEST12345698765432 and AKIA") + "IOSFODNN7EXAMPLE",  // no literal key
      "no findings at all",
  };
  for (const std::string& text : texts) {
    SCOPED_TRACE(text);
    const std::vector<PrivacyFinding> all = scanner.scan(text);
    const std::optional<PrivacyFinding> first = scanner.first(text);
    ASSERT_EQ(first.has_value(), !all.empty());
    if (first) {
      EXPECT_EQ(*first, all.front());
    }
  }
}

TEST(PrivacyFirst, ContainedFindingsAreDropped) {
  // The IPv4 tail of an IPv6 address and the digits of an IBAN are not findings of their own.
  const std::vector<PrivacyFinding> findings =
      PrivacyScanner().scan("::ffff:81.2.69.160 DE89 3704 0044 0532 0130 00");
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].detector, "ip_address");
  EXPECT_EQ(findings[1].detector, "iban");
}

TEST(PrivacyInput, EmptyAndInvalidUtf8) {
  const PrivacyScanner scanner = golden_scanner();
  EXPECT_TRUE(scanner.scan("").empty());
  EXPECT_FALSE(scanner.first("").has_value());
  const std::vector<std::string> invalid = {"\xff\xfe\xfd",
                                            "\xc3",
                                            "abc\xe2\x82",
                                            "\xf0\x9f\x98",
                                            "\xed\xa0\x80 surrogate",
                                            "\xc0\xaf overlong",
                                            "\xf4\x90\x80\x80 too large",
                                            "\x80\x80\x80",
                                            std::string(1, '\0')};
  for (const std::string& text : invalid) {
    EXPECT_TRUE(scanner.scan(text).empty());
  }
  // Around opaque bytes the detectors still work, and offsets stay exact.
  const std::string text =
      "\xff\xc3 card 4111\xe2\x80\x8b"
      "1111 1111 1111 \xe2\x82";
  const std::vector<PrivacyFinding> findings = scanner.scan(text);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].offset, 8u);
  EXPECT_EQ(text.substr(findings[0].offset, findings[0].length),
            "4111\xe2\x80\x8b"
            "1111 1111 1111");
}

TEST(PrivacyInput, LargeInputsComplete) {
  const PrivacyScanner scanner = golden_scanner();
  std::string prose;
  while (prose.size() < 200'000) {
    prose += "The committee met on Tuesday (room 12) to review 3 proposals: budget, staff, 2024. ";
  }
  EXPECT_TRUE(scanner.scan(prose).empty());
  // Adversarial shapes: long digit runs, endless separators, many at signs and colons.
  const std::vector<std::string> adversarial = {
      std::string(200'000, '7'),
      std::string(200'000, '@'),
      std::string(200'000, ':'),
      [] {
        std::string s;
        while (s.size() < 200'000) {
          s += "1 ";
        }
        return s;
      }(),
      [] {
        std::string s;
        while (s.size() < 200'000) {
          s += "-----BEGIN RSA PRIVATE KEY----- ";
        }
        return s;
      }(),
      [] {
        std::string s;
        while (s.size() < 200'000) {
          s += "a[at]b[dot]";
        }
        return s;
      }(),
  };
  for (const std::string& text : adversarial) {
    (void)scanner.scan(text);
    (void)scanner.first(text);
  }
  // Findings all through a large text are all reported.
  std::string many;
  for (int k = 0; k < 2'000; ++k) {
    many += "card 4111 1111 1111 1111, mail a@example.com; ";
  }
  EXPECT_EQ(scanner.scan(many).size(), 4'000u);
}

TEST(PrivacyScanner, CopiesShareRulesAndScanConcurrently) {
  const PrivacyScanner original = golden_scanner();
  const PrivacyScanner copy = original;  // NOLINT(performance-unnecessary-copy-initialization)
  const std::string text = "HIV 4111 1111 1111 1111 我的身份证号码是11010519491231002X";
  const std::vector<PrivacyFinding> expected = original.scan(text);
  ASSERT_EQ(expected.size(), 3u);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (size_t t = 0; t < mismatches.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 200; ++k) {
        mismatches[t] += (t % 2 == 0 ? original : copy).scan(text) == expected ? 0 : 1;
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

// ---- the per-thread memo of short clean strings (routing/privacy_memo.h) ----

TEST(PrivacyMemo, ACleanShortStringIsRememberedAndStaysClean) {
  PrivacyScanner scanner;
  EXPECT_TRUE(scanner.scan("messages").empty());
  EXPECT_TRUE(scanner.scan("messages").empty());
  EXPECT_FALSE(scanner.first("messages").has_value());
  EXPECT_GE(privacy_detail::memo_size(), 1U);
}

TEST(PrivacyMemo, AStringWithAFindingIsFoundEveryTime) {
  PrivacyScanner scanner;
  for (int i = 0; i < 3; ++i) {
    const auto findings = scanner.scan("a@example.com");
    ASSERT_EQ(findings.size(), 1U) << i;
    EXPECT_EQ(findings[0].detector, "email");
    EXPECT_TRUE(scanner.first("a@example.com").has_value()) << i;
  }
}

// A verdict belongs to the rules that gave it: a word clean under the defaults is a finding
// under rules that list it, on the same thread, in either order.
TEST(PrivacyMemo, OtherRulesDoNotInheritAVerdict) {
  PrivacyScanner defaults;
  PrivacyScanner configured = golden_scanner();
  EXPECT_TRUE(defaults.scan("salary").empty());
  EXPECT_EQ(configured.scan("salary").size(), 1U);
  EXPECT_TRUE(defaults.scan("salary").empty());
  EXPECT_TRUE(configured.first("salary").has_value());
  // A copy shares its rules, and so its verdicts.
  PrivacyScanner copy = configured;
  EXPECT_TRUE(copy.first("salary").has_value());
}

TEST(PrivacyMemo, IsBoundedAndKeepsNoLongText) {
  PrivacyScanner scanner;
  for (size_t i = 0; i < privacy_detail::kMaxMemoEntries + 100; ++i) {
    EXPECT_TRUE(scanner.scan("key" + std::to_string(i) + "x").empty());
    EXPECT_LE(privacy_detail::memo_size(),
              privacy_detail::kMaxMemoEntries * privacy_detail::kMemoScanners);
  }
  // Long text is scanned every time; it never enters the memo.
  const std::string long_text(privacy_detail::kMaxMemoBytes + 1, 'a');
  EXPECT_TRUE(scanner.scan("fresh").empty());
  const size_t before = privacy_detail::memo_size();
  EXPECT_TRUE(scanner.scan(long_text).empty());
  EXPECT_EQ(privacy_detail::memo_size(), before);
}

// The memo's table grows as texts come: every text remembered is found again, through every
// doubling, and a text one byte away, or under other rules, is not.
TEST(PrivacyMemo, EveryRememberedTextIsFoundAndNoOther) {
  constexpr uint64_t kRules = 0x7fff0001;  // ids no scanner of this test has
  constexpr uint64_t kOtherRules = 0x7fff0002;
  std::vector<std::string> texts;
  for (size_t i = 0; i < privacy_detail::kMaxMemoEntries - 1; ++i) {
    texts.push_back("t" + std::to_string(i * 7919) + std::string(i % 40, 'x'));
  }
  for (size_t i = 0; i < texts.size(); ++i) {
    privacy_detail::remember_clean(kRules, texts[i]);
    ASSERT_TRUE(privacy_detail::known_clean(kRules, texts[i])) << texts[i];
  }
  for (const auto& text : texts) {
    ASSERT_TRUE(privacy_detail::known_clean(kRules, text)) << text;
    std::string near = text;
    near.back() = near.back() == 'y' ? 'z' : 'y';
    EXPECT_FALSE(privacy_detail::known_clean(kRules, near)) << near;
    EXPECT_FALSE(privacy_detail::known_clean(kOtherRules, text)) << text;
  }
  EXPECT_FALSE(privacy_detail::known_clean(kRules, ""));
  privacy_detail::remember_clean(kRules, "");
  EXPECT_TRUE(privacy_detail::known_clean(kRules, ""));
}

// Each thread has its own memo: one thread's verdicts cost another nothing and race with nothing.
TEST(PrivacyMemo, EachThreadHasItsOwn) {
  PrivacyScanner scanner;
  EXPECT_TRUE(scanner.scan("content").empty());
  size_t other = 99;
  std::thread([&] { other = privacy_detail::memo_size(); }).join();
  EXPECT_EQ(other, 0U);
}

}  // namespace
}  // namespace tandem::routing
