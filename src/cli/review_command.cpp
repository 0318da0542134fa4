// `tandem review list|show|answer|reject`: the human tier's queue, for reviewers at the
// gateway's machine. Works on the same SQLite database as `tandem serve` (WAL: both at once).

#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "config/config.h"
#include "server/tandem_api.h"
#include "store/review_queue.h"
#include "store/trace_log.h"

namespace tandem::cli {
namespace {

struct ReviewFlags {
  std::string database;
  std::string config_path;
  std::string status = "pending";
  size_t limit = 50;
  std::string id;
  std::string text;
  std::string reviewer;
  bool json = false;
};

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string one_line(const std::string& text, size_t width) {
  std::string out;
  for (char c : text) {
    out.push_back(c == '\n' || c == '\r' || c == '\t' ? ' ' : c);
  }
  if (out.size() > width) {
    out.resize(width - 3);
    out += "...";
  }
  return out;
}

Result<std::shared_ptr<store::Database>> open_database(const ReviewFlags& flags) {
  std::string path = flags.database;
  if (path.empty() && !flags.config_path.empty()) {
    auto config = config::load_config(flags.config_path);
    if (!config) {
      return config.error();
    }
    path = config->routing.database;
  }
  if (path.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "name the database with --db, or a config whose routing.database is set");
  }
  return store::Database::open(path);
}

void print_ticket(const store::ReviewTicket& t) {
  std::printf("id:        %s\nstatus:    %s\nclient:    %s\nmodel:     %s\nreason:    %s\n",
              t.id.c_str(), t.status.c_str(), t.client.empty() ? "-" : t.client.c_str(),
              t.model.c_str(), t.reason.c_str());
  std::printf("prompt:\n%s\n", t.prompt_text.c_str());
  if (!t.draft_answer.empty()) {
    std::printf("draft (%s):\n%s\n", t.draft_tier.c_str(), t.draft_answer.c_str());
  }
  if (t.status != "pending") {
    std::printf("%s by %s:\n%s\n", t.status == "answered" ? "answer" : "rejected",
                t.reviewer.c_str(), t.answer.c_str());
  }
}

int run(const std::string& action, const ReviewFlags& flags) {
  auto db = open_database(flags);
  if (!db) {
    std::cerr << "tandem review " << action << ": " << db.error().message << "\n";
    return 1;
  }
  store::SqliteReviewQueue q(db.value());
  if (action == "list") {
    auto tickets = q.list(flags.status == "all" ? "" : flags.status, flags.limit);
    if (!tickets) {
      std::cerr << "tandem review list: " << tickets.error().message << "\n";
      return 1;
    }
    if (flags.json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& t : tickets.value()) {
        out.push_back(server::ticket_json(t));
      }
      std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      return 0;
    }
    std::printf("%-28s %-9s %-12s %s\n", "ID", "STATUS", "CLIENT", "PROMPT");
    for (const auto& t : tickets.value()) {
      std::printf("%-28s %-9s %-12s %s\n", t.id.c_str(), t.status.c_str(),
                  t.client.empty() ? "-" : one_line(t.client, 12).c_str(),
                  one_line(t.prompt_text, 60).c_str());
    }
    return 0;
  }
  Result<store::ReviewTicket> ticket =
      action == "show"     ? q.get(flags.id)
      : action == "answer" ? q.answer(flags.id, flags.text, flags.reviewer, now_ms())
                           : q.reject(flags.id, flags.text, flags.reviewer, now_ms());
  if (!ticket) {
    std::cerr << "tandem review " << action << ": " << ticket.error().message << "\n";
    return 1;
  }
  if (action == "answer") {
    // The answer labels the edge's draft in the routing trace (a verdict, never the text).
    auto labelled = store::TraceLog(db.value()).label_by_ticket(flags.id, flags.text);
    if (!labelled) {
      std::cerr << "tandem review answer: the trace of " << flags.id
                << " was not labelled: " << labelled.error().message << "\n";
    }
  }
  if (flags.json) {
    std::cout << server::ticket_json(ticket.value())
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else {
    print_ticket(ticket.value());
  }
  return 0;
}

}  // namespace

std::function<int()> add_review_command(CLI::App& app) {
  auto flags = std::make_shared<ReviewFlags>();
  auto action = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("review", "The human review queue: list, show and answer");
  cmd->require_subcommand(1);
  auto common = [&](CLI::App* sub) {
    sub->add_option("--db", flags->database, "The gateway's SQLite database (routing.database)");
    sub->add_option("-c,--config", flags->config_path, "Or: the gateway's YAML config");
    sub->add_flag("--json", flags->json, "Print JSON");
  };
  CLI::App* list = cmd->add_subcommand("list", "List tickets, newest first");
  common(list);
  list->add_option("--status", flags->status, "pending, answered, rejected or all")
      ->capture_default_str()
      ->check(CLI::IsMember({"pending", "answered", "rejected", "all"}));
  list->add_option("--limit", flags->limit, "At most this many")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  CLI::App* show = cmd->add_subcommand("show", "Show one ticket");
  common(show);
  show->add_option("id", flags->id, "Ticket id (rev_...)")->required();
  CLI::App* answer = cmd->add_subcommand("answer", "Answer a pending ticket");
  common(answer);
  answer->add_option("id", flags->id, "Ticket id (rev_...)")->required();
  answer->add_option("answer", flags->text, "The answer the client receives")->required();
  answer->add_option("--reviewer", flags->reviewer, "Who answers")->required();
  CLI::App* reject = cmd->add_subcommand("reject", "Close a pending ticket without an answer");
  common(reject);
  reject->add_option("id", flags->id, "Ticket id (rev_...)")->required();
  reject->add_option("note", flags->text, "Why (the client sees it)")->required();
  reject->add_option("--reviewer", flags->reviewer, "Who rejects")->required();
  for (CLI::App* sub : {list, show, answer, reject}) {
    sub->callback([action, sub] { *action = sub->get_name(); });
  }
  return [flags, action] { return run(*action, *flags); };
}

}  // namespace tandem::cli
