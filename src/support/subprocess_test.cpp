#include "support/subprocess.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace ucut {

TEST(Subprocess, CapturesOutputAndExitCode) {
  auto r = subprocess_run({.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_FALSE(r->success());
}

TEST(Subprocess, FeedsStdin) {
  auto r = subprocess_run({.argv = {"cat"}, .stdin_text = "hello"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "hello");
  EXPECT_TRUE(r->success());
}

TEST(Subprocess, TimeoutKillsTheProcessGroup) {
  auto r = subprocess_run({.argv = {"sh", "-c", "sleep 30 & sleep 30"},
                           .timeout = std::chrono::milliseconds(300)});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(r->seconds, 10.0);
}

// A stopping search kills its compiles: the flag turning true kills the whole process group.
TEST(Subprocess, AbortFlagKillsTheProcessGroup) {
  std::atomic<bool> abort{false};
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    abort = true;
  });
  auto r = subprocess_run({.argv = {"sh", "-c", "sleep 30 & sleep 30"}, .abort = &abort});
  t.join();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->aborted);
  EXPECT_FALSE(r->timed_out);
  EXPECT_FALSE(r->success());
}

// on_err sees stderr while the child runs (the extractor's progress notes), before it ends.
TEST(Subprocess, StderrArrivesWhileTheChildRuns) {
  std::string seen;
  bool before_exit = false;
  auto r = subprocess_run({.argv = {"sh", "-c", "echo first >&2; sleep 0.3; echo second >&2"},
                           .on_err = [&](std::string_view chunk) {
                             seen.append(chunk);
                             if (seen == "first\n") before_exit = true;  // not yet "second"
                           }});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(seen, "first\nsecond\n");
  EXPECT_EQ(r->err, seen);
  EXPECT_TRUE(before_exit);
}

TEST(Subprocess, MissingProgramIsAnError) {
  auto r = subprocess_run({.argv = {"definitely-not-a-program-ucut"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("could not start"), std::string::npos);
}

TEST(Subprocess, CrashIsAResult) {
  auto r = subprocess_run({.argv = {"sh", "-c", "kill -SEGV $$"}});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->signaled);
}

TEST(Subprocess, FormatQuotes) {
  EXPECT_EQ(subprocess_format({"nvcc", "-O3", "a b.cu", "it's"}), "nvcc -O3 'a b.cu' 'it'\\''s'");
}

}  // namespace ucut
