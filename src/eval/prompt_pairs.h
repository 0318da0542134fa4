#pragma once
// Prompt pairs: two requests where one is plainly harder than the other (JSONL: {id, lang,
// family, easy, hard}), the data of the task model's training (task_training.h) and of the
// common-sense measurements (pair_ordering.h). Each side is a prompt (a string) or a whole
// conversation as a chat client sends it (a list of {role, content} messages ending in a user
// message), so a follow-up can be judged with the thread before it (routing/thread_task.h).
//
// Thread-safety: pure functions over their arguments.

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "routing/prompt_features.h"

namespace tandem::eval {

// What a conversation holds besides its last user message; a side written as one prompt has
// none (total_chars 0).
struct PairThread {
  std::string system;                     // system and developer messages, one after another
  std::vector<std::string> earlier_user;  // the user messages before the last, in order
  size_t turns = 1;                       // user and assistant messages
  size_t total_chars = 0;                 // every message's text, joined by line breaks
};

struct PromptPair {
  std::string id;
  std::string lang;
  std::string family;
  std::string easy;  // the easy side's prompt, or its conversation's last user message
  std::string hard;
  std::string file;  // where it was read from: the unit left out
  PairThread easy_thread;
  PairThread hard_thread;
};

// Reads pair files. Errors name the file, the line and the field ("p.jsonl:12: hard: missing",
// "p.jsonl:3: easy[2].role: must be system, developer, user, assistant or tool").
Result<std::vector<PromptPair>> load_prompt_pairs(const std::vector<std::string>& files);

// One side as the gateway's router reads it: `earlier` holds the views of the thread's earlier
// user messages, and must outlive the view (as must `prompt` and `thread`).
routing::PromptView pair_side_view(const std::string& prompt, const PairThread& thread,
                                   std::vector<std::string_view>& earlier);

}  // namespace tandem::eval
