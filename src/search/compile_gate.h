// The process-wide limit on compiles running at once. Every search session compiles its
// lookahead in background threads; a suite runs dozens of sessions, so without one limit their
// nvcc jobs (~3.5 GB each) would outnumber the cores and the memory. Waiters are served in the
// order they arrived (tickets), so a suite's candidates compile in the order they were proposed,
// except that urgent waiters (candidates of a problem with nothing correct yet: they decide
// whether it is solved at all) go before the rest. In a suite the lookahead of problems already
// correct otherwise filled the queue ahead of a failing problem's next rung: run AI
// (docs/benchmarks.md) ended with two problems stuck at one TF32 mismatch, their 3xTF32 retries
// still queued.
// A waiter whose candidate was dropped while it queued leaves without compiling (`cancelled`),
// and so does every waiter once build_abort_compiles() was called (the search has stopped).
// Width 0 (the default) means no limit: unit tests with instant fake compilers never wait.
// It is also the builder's JobSlots: a candidate's compile holds one slot, and its library's
// other units take free slots with try_acquire, only while no candidate is waiting.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <utility>

#include "build/builder.h"

namespace ucut::search {

class CompileGate : public build::JobSlots {
 public:
  // 0: unlimited. Takes effect for waiters that arrive after the call.
  void set_width(int width);
  int width() const;
  // Blocks until a slot is free and every waiter before it has been served (urgent waiters in
  // arrival order, then the others in arrival order). Returns false (and holds no slot) when
  // *cancelled became true while waiting.
  bool acquire(const std::atomic<bool>* cancelled = nullptr, bool urgent = false);
  // A slot now, or false: never blocks; false while anyone waits or at width 0 (no limit set).
  bool try_acquire() override;
  void release() override;
  int running() const;
  int waiting() const;  // callers inside acquire() that hold no slot yet

  // How the slots were used since the last reset_usage() (or the gate's creation): slot-seconds
  // held, and the same over only the time a candidate waited in acquire() for a slot (issue 37's
  // "compile cores busy while any candidate waits"; the headline prints both).
  struct Usage {
    double wall_s = 0;            // since the reset
    double slot_s = 0;            // slot-seconds held (candidates and their libraries' other units)
    double waiting_s = 0;         // time with at least one waiter
    double slot_s_waiting = 0;    // slot-seconds held during that time
  };
  Usage usage() const;
  void reset_usage();
  // Seconds from any fixed origin (tests give a fake clock; default: the steady clock).
  void set_clock(std::function<double()> now);

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int width_ = 0;
  int running_ = 0;
  uint64_t next_ticket_ = 0;
  std::set<std::pair<int, uint64_t>> queue_;  // waiters: (0 urgent / 1 not, ticket), next first
  std::function<double()> now_;
  mutable double since_ = -1, last_ = -1;  // usage's start and last accounting (-1: at the first call)
  mutable Usage use_;
  double now_s() const;
  void account() const;  // adds the time since the last state change, at its state; under mu_
};

// The gate every SearchSession compiles through.
CompileGate& compile_gate();

}  // namespace ucut::search
