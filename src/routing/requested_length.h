#pragma once
// How long an answer a prompt asks for. "Write a haiku about autumn" and "Write a 3,000-word
// story about a lighthouse keeper" are both creative writing, and the words around them look
// alike; what sets them apart is the size named in the request, which neither the cue words nor
// the task model's n-grams read (a number is one n-gram, whatever its value). A small model
// writes a few hundred words well and loses the thread over thousands.
//
// The size is read in the request (find_prompt_request), not in the material it pastes: a number,
// in digits ("3,000", "1.5k", "1500-2000"), in English words ("two thousand") or in Chinese
// numerals ("两万", "三千五", "5千"), followed by a unit of text: words, pages, paragraphs,
// chapters, stanzas, lines, sentences, characters, minutes of speech, slides, scenes (English,
// and the common forms in Spanish, French, German, Portuguese, Italian and Russian), 字, 页,
// 章, 段, 句, 分钟 (Chinese and Japanese), 자, 단어, 페이지, 분 (Korean). Each unit converts to
// English-word equivalents (a page is 400, a Chinese character 0.7).
//
// A size counts only where its sentence asks for text (a verb such as write, draft, need, 写,
// 需要, 書いて, not a past form: "I wrote", "写了"), or as a target whatever the verb ("in about
// 8,000 words", "用八千字"). What is not a request for that much text is left out or weighed
// down:
//   - the size of existing material: "My boss sent around a 12,000-word doc", "my 3,000-word
//     essay", "this 10-page report", "这篇5000字的论文", "第三章" (an ordinal names a part);
//   - a cap: "under 50 words", "no more than two pages", "300字以内", "不超过100字" counts half;
//   - a time: "in 5 minutes", and minutes of anything but a spoken piece ("a 5-minute toast"
//     counts, "a 45-minute lesson" does not).
//
// Thread-safety: pure functions.

#include <string_view>

#include "routing/request_spans.h"

namespace tandem::routing {

// The largest answer size the request names, in English-word equivalents; 0 when it names none.
// A size of a short answer (200 words or fewer) is given as named, its context unread: it does
// not change the feature.
// Linear in the request's length; never throws, any bytes accepted.
double requested_answer_words(std::string_view text);
double requested_answer_words(const PromptRequest& request);  // the request already found

// The feature's value: log1p(words beyond what a small model writes well, in thousands), 0 for
// a short answer or none named ("2,000 words" 1.03, "10 pages" 1.57, "两万字" 2.69).
double requested_length_value(std::string_view text);
double requested_length_value(const PromptRequest& request);

}  // namespace tandem::routing
