#pragma once
// Writes routing traces on a thread of its own, so that a request never waits for SQLite:
// submit() only moves the record into a bounded queue. Traces and labels go in batches: they
// wait up to ~20 ms (or until 64 have gathered) unless an audit row someone waits for
// (submit_audit with `stored`) or a flush() takes them along at once. When the queue is full (the
// disk or another process holds the database up) the record is dropped and counted — a trace is
// worth less than the latency of the request it describes — and the writer logs a warning
// with the running count. Retention (TraceLog::prune) runs every few hundred rows, never per
// insert. close(), or the destructor, writes everything still queued before returning.
//
// Thread-safety: submit*(), flush() and the counters may be called from any thread; close()
// from one thread at a time (the owner, at shutdown).

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <variant>

#include "store/audit_log.h"
#include "store/trace_log.h"

namespace tandem::store {

class TraceWriter {
 public:
  struct Options {
    size_t queue_capacity = 4096;  // records and labels waiting; more are dropped
    uint64_t max_rows = 1000000;   // retention
    // Retention runs after this many rows were written since the last run (and at close);
    // 0: max_rows / 10, at least 1 and at most 10,000.
    uint64_t prune_every = 0;
    uint64_t max_audit_rows = 100000;  // retention of the cloud audit
  };

  // `audit` may be null: submit_audit() then drops what it is given.
  TraceWriter(std::shared_ptr<TraceLog> log, Options options,
              std::shared_ptr<AuditLog> audit = nullptr);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Queues a record; never blocks on the database. False when it was dropped (queue full, or
  // the writer is closed).
  bool submit(TraceRecord record);
  // Queues a review label (TraceLog::label_by_ticket), applied after every record submitted
  // before it. The answer is hashed here; its text is not kept.
  bool submit_review_label(const std::string& ticket, std::string_view answer_text);
  // Queues a row of the cloud audit (store/audit_log.h). `stored`, when given, is called on the
  // writer's thread once the row was written (true) or the database refused it (false); it is
  // not called when this returns false. An audit in memory (AuditLog::in_memory) takes the row
  // at once, on the caller's thread, and `stored` is called there before this returns.
  bool submit_audit(AuditRecord record, std::function<void(bool stored)> stored = nullptr);
  // Whether a stored audit row outlives the process: false without an audit or when it lives
  // in memory, where a row waiting in the queue is as safe as a committed one and a sender
  // gains nothing by waiting for the commit.
  bool audit_persistent() const;

  // Blocks until everything submitted before the call has been written (or has failed).
  void flush();
  // Writes what is queued, runs the retention and stops the thread; later submits are dropped.
  void close();

  uint64_t written() const;  // records stored
  uint64_t dropped() const;  // records and labels dropped because the queue was full or closed
  uint64_t failed() const;   // records and labels the database refused

 private:
  struct ReviewLabel {
    std::string ticket;
    std::string answer_hash;
  };
  struct AuditItem {
    AuditRecord record;
    std::function<void(bool)> stored;
  };
  using Item = std::variant<TraceRecord, ReviewLabel, AuditItem>;

  // An audit row whose sender waits for it: the writer must not linger over it.
  static bool awaited(const Item& item);
  bool enqueue(Item item);
  void run();
  // Returns, with the lock held, when the queue should be written now: an awaited item or a
  // flush, a full batch, closing, or a linger's end.
  void wait_for_work(std::unique_lock<std::mutex>& lock);
  void write(std::deque<Item>& batch);
  // The whole batch in one transaction, in queue order: one commit for every trace, audit row
  // and label in it. False, with nothing written and the batch untouched, when it cannot be:
  // an item a log would refuse, logs on different databases, or a failing database. Adds the
  // traces written to `written` and fires the audit rows' callbacks after the commit.
  bool write_together(std::deque<Item>& batch, uint64_t& written);
  // Item by item (runs of traces in one transaction each), so that one bad item costs only
  // itself; adds to `written` and `failed`.
  void write_apart(std::deque<Item>& batch, uint64_t& written, uint64_t& failed);
  void prune();
  void report_drops(bool force);

  std::shared_ptr<TraceLog> log_;
  std::shared_ptr<AuditLog> audit_;
  Options options_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;  // the writer: work queued or closing
  std::condition_variable done_;  // flush(): a batch finished
  std::deque<Item> queue_;        // guarded by mutex_
  uint64_t submitted_ = 0;        // items accepted so far; guarded by mutex_
  uint64_t finished_ = 0;         // items written or failed so far; guarded by mutex_
  bool closing_ = false;          // guarded by mutex_
  size_t awaited_ = 0;    // queued audit rows whose sender waits for them; guarded by mutex_
  size_t flushing_ = 0;   // flush() calls waiting; guarded by mutex_
  bool idle_ = false;     // the writer sleeps until an item wakes it; guarded by mutex_
  bool stopped_ = false;  // the thread has finished; guarded by mutex_
  uint64_t written_ = 0;  // guarded by mutex_
  uint64_t dropped_ = 0;  // guarded by mutex_
  uint64_t failed_ = 0;   // guarded by mutex_

  // Used by the writer thread only.
  uint64_t since_prune_ = 0;
  uint64_t audits_since_prune_ = 0;
  uint64_t drops_reported_ = 0;
  std::chrono::steady_clock::time_point last_drop_report_{};

  std::thread thread_;  // last: started once everything above is ready
};

}  // namespace tandem::store
