#pragma once
// What a conversation is about, for the message that continues it. Chat clients send the whole
// thread, and a follow-up often says little by itself: "Why?", "continue", "now do the same for
// n = 5", "那第二步呢？". After "Prove that there are infinitely many primes…" such a message
// asks for more of a proof; after "What is the capital of France?" it asks for a sentence.
// Every other feature reads only the last user message, so both scored the same.
//
// The thread's task is what the classifier reads of a request's ask, applied to the earlier
// user turns: the task model's judgement (task_model.h: its logit, or its stand-in's from the
// turn's task cues on text it cannot read) plus the answer size named
// (requested_length.h), the two features whose prior weight is one logit per unit, read in each
// turn's request (request_spans.h) within its first and last kThreadWindowBytes. The most recent
// kThreadTurns turns are read, each further back counted kThreadDecay times less (the most recent
// request is what a follow-up continues). Only a hard thread counts (a negative sum reads as 0): an
// easy thread does not make a request that states a hard task easier, and a message that states an
// easy task of its own is scored by it as before.
//
// How much the thread counts depends on how little the last message says by itself:
//   - fully for an empty message, half at kSelfContainedBytes, less the longer it is, and not
//     at all from kSelfContainedLimit;
//   - not at all when it opens by changing the subject ("unrelated:", "by the way", "btw",
//     "another question", "顺便问一下", "换个话题", "另外问一下", …).
// The system prompt is not read here: what an app asks of every message is read with the
// message itself (prompt_features.h, kSystemHeadBytes).
//
// Thread-safety: pure functions.

#include <cstddef>
#include <span>
#include <string_view>

namespace tandem::routing {

class TaskModel;

inline constexpr size_t kThreadTurns = 3;
inline constexpr double kThreadDecay = 0.7;
inline constexpr double kSelfContainedBytes = 256;
// An earlier message is read in its first and last kThreadWindowBytes (where its request is),
// so the thread costs at most 1.5 KiB of the task model's reading whatever its length.
inline constexpr size_t kThreadWindowBytes = 256;
// A last message this long (reliance at most 0.1) is taken as self-contained and the thread is
// not read: a long prompt pays for its own features only.
inline constexpr size_t kSelfContainedLimit = 9 * static_cast<size_t>(kSelfContainedBytes);

// Whether `last_user` opens by turning to a new subject (its first bytes, ASCII case ignored).
bool changes_subject(std::string_view last_user);

// How much of the thread's task a message of this text inherits, in [0, 1].
double thread_reliance(std::string_view last_user);

// The feature's value: the thread's task (positive part, decayed with distance, clipped at the
// task feature's limit) times the last message's reliance on it; 0 without earlier turns.
// `earlier_user`: the conversation's user messages before the last, oldest first.
double thread_task_value(std::span<const std::string_view> earlier_user, std::string_view last_user,
                         const TaskModel& task);

}  // namespace tandem::routing
