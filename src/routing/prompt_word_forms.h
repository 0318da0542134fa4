#pragma once
// Words found in the vocabulary (prompt_vocabulary.h) without what writers join to them: Arabic
// and Hebrew write "and" as a letter joined to the next word, and an Arabic object noun takes
// its case ending on an alif. Each is looked up only when the word as written is not found.
//
// Thread-safety: pure functions over immutable data.

#include <string_view>

#include "routing/prompt_vocabulary.h"

namespace tandem::routing::prompt_detail {

// The entry for an Arabic or Hebrew word that starts with the conjunction "and" (و, ו), written
// joined to the word it precedes ("واشرح", "ותסביר": "and explain"), found without it; nullptr
// for any other word or when the rest is not in the vocabulary. `word` is as for find_word.
const VocabularyEntry* find_word_after_conjunction(std::string_view word);

// The entry for an Arabic noun in the indefinite accusative, the form a request's object takes
// ("أريد تحليلاً", I want an analysis; "اكتب مقالاً", write an article): its tanween is a mark the
// lookup leaves out, and the alif it sits on is found without as well. nullptr for any other
// word (one with a letter Urdu or Persian adds to the script among them), for one of fewer than
// three letters before the alif, or when the noun is not in the vocabulary. `word` is as for
// find_word, its marks already left out.
const VocabularyEntry* find_word_before_accusative_alif(std::string_view word);

}  // namespace tandem::routing::prompt_detail
