#include "store/trace_writer.h"

#include <algorithm>
#include <utility>

#include "common/answer_match.h"
#include "common/log.h"

namespace tandem::store {
namespace {

// Rows per transaction: enough to make a burst cheap, few enough that the connection (which
// the request path's consistency lookups share) is never held for long.
constexpr size_t kMaxBatch = 256;
// A full queue is reported at once, then at most this often while it stays full.
constexpr auto kDropReportInterval = std::chrono::seconds(10);
// Nobody waits for a trace or a label: they wait in the queue until kWakeBatch have gathered,
// or for about kLinger, or until an item someone waits for (an audit row that must be stored
// before its send, a flush()) takes them along. Waking the writer for each one cost a system
// call and two context switches per request, and wrote batches of one.
constexpr size_t kWakeBatch = 64;
constexpr auto kLinger = std::chrono::milliseconds(20);

uint64_t prune_interval(const TraceWriter::Options& options) {
  if (options.prune_every > 0) {
    return options.prune_every;
  }
  return std::clamp<uint64_t>(options.max_rows / 10, 1, 10000);
}

}  // namespace

TraceWriter::TraceWriter(std::shared_ptr<TraceLog> log, Options options,
                         std::shared_ptr<AuditLog> audit)
    : log_(std::move(log)), audit_(std::move(audit)), options_(options) {
  options_.prune_every = prune_interval(options);
  thread_ = std::thread([this] { run(); });
}

TraceWriter::~TraceWriter() {
  close();
}

bool TraceWriter::awaited(const Item& item) {
  const auto* audit = std::get_if<AuditItem>(&item);
  return audit != nullptr && audit->stored != nullptr;
}

bool TraceWriter::enqueue(Item item) {
  const bool urgent = awaited(item);
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (closing_ || queue_.size() >= options_.queue_capacity) {
      ++dropped_;
      return false;
    }
    queue_.push_back(std::move(item));
    ++submitted_;
    awaited_ += urgent ? 1 : 0;
    wake = urgent || idle_ || queue_.size() >= kWakeBatch;
  }
  if (wake) {
    wake_.notify_one();
  }
  return true;
}

bool TraceWriter::submit(TraceRecord record) {
  return enqueue(std::move(record));
}

bool TraceWriter::submit_audit(AuditRecord record, std::function<void(bool stored)> stored) {
  if (!audit_) {
    return false;
  }
  if (audit_->kept_in_memory()) {  // a lock and a move, not a writer's insert
    const bool appended = audit_->append(std::move(record)).ok();
    if (stored) {
      stored(appended);
    }
    return appended;
  }
  return enqueue(AuditItem{std::move(record), std::move(stored)});
}

bool TraceWriter::audit_persistent() const {
  return audit_ && audit_->persistent();
}

bool TraceWriter::submit_review_label(const std::string& ticket, std::string_view answer_text) {
  return enqueue(ReviewLabel{ticket, answer_hash(answer_text)});
}

void TraceWriter::flush() {
  std::unique_lock lock(mutex_);
  const uint64_t target = submitted_;
  ++flushing_;
  wake_.notify_one();
  done_.wait(lock, [&] { return finished_ >= target || stopped_; });
  --flushing_;
}

void TraceWriter::close() {
  {
    std::lock_guard lock(mutex_);
    if (closing_) {
      return;
    }
    closing_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) {
    thread_.join();
  }
}

uint64_t TraceWriter::written() const {
  std::lock_guard lock(mutex_);
  return written_;
}

uint64_t TraceWriter::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

uint64_t TraceWriter::failed() const {
  std::lock_guard lock(mutex_);
  return failed_;
}

void TraceWriter::wait_for_work(std::unique_lock<std::mutex>& lock) {
  // (An awaited row is in the queue; a flush has nothing to hurry when the queue is empty.)
  const auto now = [&] {
    return closing_ || awaited_ > 0 || queue_.size() >= kWakeBatch ||
           (flushing_ > 0 && !queue_.empty());
  };
  if (queue_.empty() && !now()) {
    // Recently busy: a timed wait, which a new trace does not interrupt. Quiet for kLinger:
    // sleep until the next item wakes it (no wake-ups on an idle device).
    if (!wake_.wait_for(lock, kLinger, [&] { return now() || !queue_.empty(); })) {
      idle_ = true;
      wake_.wait(lock, [&] { return closing_ || !queue_.empty(); });
      idle_ = false;
    }
  }
  wake_.wait_for(lock, kLinger, now);
}

void TraceWriter::run() {
  for (;;) {
    std::deque<Item> batch;
    bool closing = false;
    {
      std::unique_lock lock(mutex_);
      wait_for_work(lock);
      const size_t n = std::min(queue_.size(), kMaxBatch);
      for (size_t i = 0; i < n; ++i) {
        awaited_ -= awaited(queue_.front()) ? 1 : 0;
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      closing = closing_ && queue_.empty();
    }
    if (!batch.empty()) {
      write(batch);
    }
    report_drops(closing);
    if (closing) {
      prune();
      {
        std::lock_guard lock(mutex_);
        stopped_ = true;
      }
      done_.notify_all();
      return;
    }
  }
}

void TraceWriter::write(std::deque<Item>& batch) {
  uint64_t written = 0;
  uint64_t failed = 0;
  const uint64_t total = batch.size();
  if (!write_together(batch, written)) {
    write_apart(batch, written, failed);
  }
  since_prune_ += written;
  if (since_prune_ >= options_.prune_every || audits_since_prune_ >= options_.prune_every) {
    prune();
  }
  {
    std::lock_guard lock(mutex_);
    written_ += written;
    failed_ += failed;
    finished_ += total;
  }
  done_.notify_all();
}

bool TraceWriter::write_together(std::deque<Item>& batch, uint64_t& written) {
  // (An audit in memory queues nothing: its rows never share the traces' transaction.)
  if (audit_ && !audit_->kept_in_memory() && audit_->database() != log_->database()) {
    return false;
  }
  for (const Item& item : batch) {
    const auto* record = std::get_if<TraceRecord>(&item);
    const auto* audit = std::get_if<AuditItem>(&item);
    if ((record && !TraceLog::check(*record)) || (audit && !AuditLog::check(audit->record))) {
      return false;
    }
  }
  {
    Connection connection = log_->database()->acquire();
    auto transaction = Transaction::begin(connection);
    if (!transaction) {
      return false;
    }
    for (const Item& item : batch) {
      bool ok = true;
      if (const auto* record = std::get_if<TraceRecord>(&item)) {
        ok = log_->append(connection, *record).ok();
      } else if (const auto* audit = std::get_if<AuditItem>(&item)) {
        ok = audit_->append(connection, audit->record).ok();
      } else {
        const auto& label = std::get<ReviewLabel>(item);
        ok = log_->label_by_ticket_hash(connection, label.ticket, label.answer_hash).ok();
      }
      if (!ok) {
        return false;  // rolled back: write_apart() finds and reports the failing item
      }
    }
    if (Status committed = transaction->commit(); !committed) {
      return false;
    }
  }
  // Committed; the connection is released before the callbacks, which may do anything.
  for (Item& item : batch) {
    if (std::holds_alternative<TraceRecord>(item)) {
      ++written;
    } else if (auto* audit = std::get_if<AuditItem>(&item)) {
      ++audits_since_prune_;
      if (audit->stored) {
        audit->stored(true);
      }
    }
  }
  batch.clear();
  return true;
}

void TraceWriter::write_apart(std::deque<Item>& batch, uint64_t& written, uint64_t& failed) {
  // Runs of records go in one transaction; a label waits for the records before it.
  while (!batch.empty()) {
    std::vector<TraceRecord> records;
    while (!batch.empty() && std::holds_alternative<TraceRecord>(batch.front())) {
      records.push_back(std::get<TraceRecord>(std::move(batch.front())));
      batch.pop_front();
    }
    if (!records.empty()) {
      Status status = log_->append_all(records);
      if (!status && records.size() > 1) {
        // One bad record must not cost the others: retry them one by one.
        status = {};
        for (const auto& record : records) {
          if (auto id = log_->append(record); id) {
            ++written;
          } else {
            ++failed;
            status = id.error();
          }
        }
      } else if (status) {
        written += records.size();
      } else {
        ++failed;
      }
      if (!status) {
        log_event(LogLevel::kWarn, "traces", "write_failed", {{"message", status.error().message}});
      }
    }
    if (!batch.empty() && std::holds_alternative<AuditItem>(batch.front())) {
      const AuditItem audit = std::get<AuditItem>(std::move(batch.front()));
      batch.pop_front();
      const auto id = audit_->append(audit.record);
      if (id) {
        ++audits_since_prune_;
      } else {
        ++failed;
        log_event(LogLevel::kWarn, "audit", "write_failed", {{"message", id.error().message}});
      }
      if (audit.stored) {
        audit.stored(id.ok());
      }
    } else if (!batch.empty()) {
      const ReviewLabel label = std::get<ReviewLabel>(std::move(batch.front()));
      batch.pop_front();
      auto labelled = log_->label_by_ticket_hash(label.ticket, label.answer_hash);
      if (!labelled) {
        ++failed;
        log_event(LogLevel::kWarn, "traces", "label_failed",
                  {{"ticket", label.ticket}, {"message", labelled.error().message}});
      }
    }
  }
}

void TraceWriter::prune() {
  since_prune_ = 0;
  if (audit_) {
    audits_since_prune_ = 0;
    if (auto deleted = audit_->prune(options_.max_audit_rows); !deleted) {
      log_event(LogLevel::kWarn, "audit", "prune_failed", {{"message", deleted.error().message}});
    }
  }
  auto deleted = log_->prune(options_.max_rows);
  if (!deleted) {
    log_event(LogLevel::kWarn, "traces", "prune_failed", {{"message", deleted.error().message}});
  }
}

void TraceWriter::report_drops(bool force) {
  uint64_t dropped = 0;
  {
    std::lock_guard lock(mutex_);
    dropped = dropped_;
  }
  const auto now = std::chrono::steady_clock::now();
  if (dropped == drops_reported_ ||
      (!force && drops_reported_ > 0 && now - last_drop_report_ < kDropReportInterval)) {
    return;
  }
  drops_reported_ = dropped;
  last_drop_report_ = now;
  log_event(LogLevel::kWarn, "traces", "dropped",
            {{"dropped_total", std::to_string(dropped)},
             {"queue_capacity", std::to_string(options_.queue_capacity)},
             {"message",
              "the trace queue was full (the database is slow or locked); these requests have "
              "no trace"}});
}

}  // namespace tandem::store
