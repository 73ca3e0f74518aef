#include "search/compile_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ucut::search {
namespace {

void wait_until(const std::function<bool()>& cond) {
  for (int i = 0; i < 2000 && !cond(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(cond());
}

TEST(CompileGate, UnlimitedByDefault) {
  CompileGate g;
  EXPECT_TRUE(g.acquire());
  EXPECT_TRUE(g.acquire());
  EXPECT_EQ(g.running(), 2);
  g.release();
  g.release();
  EXPECT_EQ(g.running(), 0);
}

TEST(CompileGate, ServesWaitersInArrivalOrderWithinItsWidth) {
  CompileGate g;
  g.set_width(1);
  ASSERT_TRUE(g.acquire());  // the main thread holds the only slot
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread> ts;
  for (int i = 1; i <= 3; ++i) {
    ts.emplace_back([&, i] {
      ASSERT_TRUE(g.acquire());
      {
        std::lock_guard<std::mutex> lock(mu);
        order.push_back(i);
      }
      g.release();
    });
    wait_until([&] { return g.waiting() == i; });  // i has its ticket before i + 1 asks
  }
  EXPECT_EQ(g.running(), 1);
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_TRUE(order.empty());  // nobody passed the held slot
  }
  g.release();
  for (auto& t : ts) t.join();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(g.running(), 0);
}

// Urgent waiters (a problem with nothing correct yet) go before earlier ordinary ones, each kind
// in arrival order.
TEST(CompileGate, UrgentWaitersGoFirst) {
  CompileGate g;
  g.set_width(1);
  ASSERT_TRUE(g.acquire());
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread> ts;
  const bool urgent[] = {false, false, true, true};
  for (int i = 1; i <= 4; ++i) {
    ts.emplace_back([&, i] {
      ASSERT_TRUE(g.acquire(nullptr, urgent[i - 1]));
      {
        std::lock_guard<std::mutex> lock(mu);
        order.push_back(i);
      }
      g.release();
    });
    wait_until([&] { return g.waiting() == i; });
  }
  g.release();
  for (auto& t : ts) t.join();
  EXPECT_EQ(order, (std::vector<int>{3, 4, 1, 2}));
  EXPECT_EQ(g.running(), 0);
}

// A library's extra units take free slots only: never past the width, never ahead of a waiting
// candidate, and not at width 0 (no limit set, so no pool to share).
TEST(CompileGate, TryAcquireTakesOnlyFreeSlotsNobodyWaitsFor) {
  CompileGate g;
  EXPECT_FALSE(g.try_acquire());
  g.set_width(2);
  ASSERT_TRUE(g.acquire());
  EXPECT_TRUE(g.try_acquire());
  EXPECT_FALSE(g.try_acquire());  // full
  EXPECT_EQ(g.running(), 2);
  g.release();
  std::thread a([&] { ASSERT_TRUE(g.acquire()); });  // takes the free slot
  a.join();
  std::atomic<bool> checked{false};
  std::thread waiter([&] {
    ASSERT_TRUE(g.acquire());
    while (!checked) std::this_thread::yield();  // hold the slot until the check below is done
    g.release();
  });
  wait_until([&] { return g.waiting() == 1; });
  g.release();                    // a slot frees while a candidate waits:
  EXPECT_FALSE(g.try_acquire());  // the waiter gets it (waiting or running), not an extra unit
  checked = true;
  waiter.join();
  g.release();
  EXPECT_EQ(g.running(), 0);
  EXPECT_TRUE(g.try_acquire());
  g.release();
}

TEST(CompileGate, ACancelledWaiterLeavesWithoutASlotAndDoesNotBlockTheNext) {
  CompileGate g;
  g.set_width(1);
  ASSERT_TRUE(g.acquire());
  std::atomic<bool> cancel{false};
  bool first = true, second = false;
  std::thread a([&] { first = g.acquire(&cancel); });
  wait_until([&] { return g.waiting() == 1; });
  std::thread b([&] {
    second = g.acquire();
    g.release();
  });
  wait_until([&] { return g.waiting() == 2; });
  cancel = true;  // the first waiter's candidate was dropped
  a.join();
  EXPECT_FALSE(first);
  EXPECT_EQ(g.running(), 1);  // still only the main thread's slot
  g.release();
  b.join();
  EXPECT_TRUE(second);  // the cancelled ticket did not hold up the one behind it
  EXPECT_EQ(g.running(), 0);
  EXPECT_EQ(g.waiting(), 0);
}

// Once the search stops (build_abort_compiles), waiters leave without a slot and no free slot
// is lent, until the flag is cleared.
TEST(CompileGate, AbortedCompilesLeaveTheGate) {
  CompileGate g;
  g.set_width(1);
  ASSERT_TRUE(g.acquire());
  std::atomic<int> result{-1};
  std::thread waiter([&] { result = g.acquire() ? 1 : 0; });
  wait_until([&] { return g.waiting() == 1; });
  build::build_abort_compiles();
  waiter.join();
  g.release();
  const bool try_while_aborted = g.try_acquire();
  const bool acquire_while_aborted = g.acquire();
  build::build_resume_compiles();
  EXPECT_EQ(result, 0);
  EXPECT_FALSE(try_while_aborted);
  EXPECT_FALSE(acquire_while_aborted);
  EXPECT_EQ(g.running(), 0);
  EXPECT_TRUE(g.acquire());
}

// The gate's usage on a fake clock: slot-seconds held over the whole time, and over only the time
// a candidate waited for a slot (where the headline's "busy while a candidate waited" comes from).
TEST(CompileGate, CountsSlotSecondsAndThoseWhileACandidateWaits) {
  CompileGate g;
  std::atomic<double> t{0};
  g.set_clock([&] { return t.load(); });
  g.set_width(2);
  ASSERT_TRUE(g.acquire());         // t 0: one slot of two held
  t = 10;
  ASSERT_TRUE(g.try_acquire());     // t 10: both held (a library's other unit)
  t = 12;
  std::thread waiter([&] {          // t 12: a candidate waits for a slot
    ASSERT_TRUE(g.acquire());
  });
  wait_until([&] { return g.waiting() == 1; });
  t = 15;
  g.release();                      // t 15: the waiter gets it, both held again
  waiter.join();
  t = 20;
  g.release();
  g.release();                      // t 20: none held
  t = 30;
  const CompileGate::Usage u = g.usage();
  EXPECT_DOUBLE_EQ(u.wall_s, 30);
  EXPECT_DOUBLE_EQ(u.slot_s, 1 * 10 + 2 * 2 + 2 * 3 + 2 * 5);  // 0-10, 10-12, 12-15, 15-20
  EXPECT_DOUBLE_EQ(u.waiting_s, 3);                            // 12-15
  EXPECT_DOUBLE_EQ(u.slot_s_waiting, 2 * 3);                   // both held while it waited
  g.reset_usage();
  t = 40;
  EXPECT_DOUBLE_EQ(g.usage().slot_s, 0);
  EXPECT_DOUBLE_EQ(g.usage().wall_s, 10);
}

}  // namespace
}  // namespace ucut::search
