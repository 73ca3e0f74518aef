// The process-wide limit on compiles running at once. Every search session compiles its
// lookahead in background threads; a suite runs dozens of sessions, so without one limit their
// nvcc jobs (~3.5 GB each) would outnumber the cores and the memory. Waiters are served in the
// order they arrived (tickets), so a suite's candidates compile in the order they were proposed.
// A waiter whose candidate was dropped while it queued leaves without compiling (`cancelled`),
// and so does every waiter once build_abort_compiles() was called (the search has stopped).
// Width 0 (the default) means no limit: unit tests with instant fake compilers never wait.
// It is also the builder's JobSlots: a candidate's compile holds one slot, and its library's
// other units take free slots with try_acquire, only while no candidate is waiting.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>

#include "build/builder.h"

namespace ucut::search {

class CompileGate : public build::JobSlots {
 public:
  // 0: unlimited. Takes effect for waiters that arrive after the call.
  void set_width(int width);
  int width() const;
  // Blocks until a slot is free and every earlier waiter has been served. Returns false (and
  // holds no slot) when *cancelled became true while waiting.
  bool acquire(const std::atomic<bool>* cancelled = nullptr);
  // A slot now, or false: never blocks; false while anyone waits or at width 0 (no limit set).
  bool try_acquire() override;
  void release() override;
  int running() const;
  int waiting() const;  // callers inside acquire() that hold no slot yet

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int width_ = 0;
  int running_ = 0;
  int waiting_ = 0;
  uint64_t next_ticket_ = 0;
  uint64_t serving_ = 0;  // the oldest ticket not yet served (admitted or cancelled)
  std::set<uint64_t> cancelled_;  // tickets that left before their turn
  void skip_cancelled();
};

// The gate every SearchSession compiles through.
CompileGate& compile_gate();

}  // namespace ucut::search
