#pragma once
// An app's task in its system prompt (prompt_features.h, kSystemHeadBytes): which part of the
// system prompt's head states it, if any part does. The features read that part first, then
// the user message; a system prompt that states no task leaves the user message read alone.
//
// Thread-safety: safe from any thread. An app sends the same system prompt with every request,
// so each thread keeps its answers for the last few heads it read (compared by their text and
// the task model's version).

#include <string_view>

#include "routing/task_model.h"

namespace tandem::routing {

// The part of the system prompt's head that states the app's task, or empty when none does:
//  - the whole head, when it has a task cue where its request is (its first line or sentence,
//    its last line) or the task model reads it far from its bias;
//  - else what follows the persona it opens with ("You are the assistant of Harbor Line.",
//    "你是顺丰速运的客服助手。"), when that has a task cue where its request is: a persona
//    introduces and the task follows it, often on the next line, before house rules that take
//    the last line ("Summarize the message in one sentence.\nBe polite.").
// A persona alone, house rules or a date line state none.
std::string_view system_task(std::string_view system, const TaskModel& task_model);

// What follows the persona `text` opens with ("You are …", "You're …", "Act as …", "I want you
// to act as …", "你是…", "您是…", "你扮演…"), which ends at the end of its sentence, a colon, a
// line break or a Chinese comma or semicolon; leading spaces are skipped. Empty when it opens
// with no persona or nothing follows one.
std::string_view after_persona(std::string_view text);

}  // namespace tandem::routing
