// ChildProcess: line I/O, deadlines, process-group kill, exit descriptions, stderr tails.
#include "eval/child_process.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ucut::eval {
namespace {

// Any process in group `pgid` that is not a zombie (zombies wait for init to reap them).
bool group_alive(pid_t pgid) {
  for (int tries = 0; tries < 50; ++tries) {
    bool alive = false;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
      std::ifstream in(e.path() / "stat");
      std::string stat;
      if (!std::getline(in, stat)) continue;
      auto close = stat.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(stat.substr(close + 2));
      char state;
      long ppid, pgrp;
      rest >> state >> ppid >> pgrp;
      if (pgrp == pgid && state != 'Z') alive = true;
    }
    if (!alive) return false;
    ::usleep(20000);
  }
  return true;
}

TEST(ChildProcess, EchoesLinesAndReportsExit) {
  ChildProcess c;
  ASSERT_TRUE(c.start({{"/bin/sh", "-c", "while read l; do echo \"got $l\"; done; echo bye >&2; exit 3"}, {}, ""}));
  ASSERT_TRUE(c.write_line("a"));
  ASSERT_TRUE(c.write_line("b"));
  std::string line;
  ASSERT_EQ(c.read_line(line, std::chrono::milliseconds(5000)), ReadEnd::line);
  EXPECT_EQ(line, "got a");
  ASSERT_EQ(c.read_line(line, std::chrono::milliseconds(5000)), ReadEnd::line);
  EXPECT_EQ(line, "got b");
  c.stop(std::chrono::milliseconds(5000));
  EXPECT_EQ(c.exit_description(), "exit code 3");
  EXPECT_NE(c.stderr_tail().find("bye"), std::string::npos);
}

TEST(ChildProcess, DeadlineThenKillTakesTheWholeGroup) {
  ChildProcess c;
  ASSERT_TRUE(c.start({{"/bin/sh", "-c", "sleep 300 & sleep 300; wait"}, {}, ""}));
  pid_t pid = c.pid();
  std::string line;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(c.read_line(line, std::chrono::milliseconds(300)), ReadEnd::timeout);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  c.kill();
  EXPECT_FALSE(c.running());
  EXPECT_FALSE(group_alive(pid));  // no live (non-zombie) process of the group is left
}

TEST(ChildProcess, SignalDeathIsDescribed) {
  ChildProcess c;
  ASSERT_TRUE(c.start({{"/bin/sh", "-c", "kill -SEGV $$"}, {}, ""}));
  std::string line;
  EXPECT_EQ(c.read_line(line, std::chrono::milliseconds(5000)), ReadEnd::exited);
  EXPECT_NE(c.exit_description().find("signal 11"), std::string::npos) << c.exit_description();
  EXPECT_FALSE(c.write_line("x"));
}

TEST(ChildProcess, EnvironmentIsPassed) {
  ChildProcess c;
  ASSERT_TRUE(c.start({{"/bin/sh", "-c", "echo $UCUT_TEST_VAR"}, {{"UCUT_TEST_VAR", "hello"}}, ""}));
  std::string line;
  ASSERT_EQ(c.read_line(line, std::chrono::milliseconds(5000)), ReadEnd::line);
  EXPECT_EQ(line, "hello");
}

TEST(ChildProcess, MissingProgramFailsToStart) {
  ChildProcess c;
  EXPECT_FALSE(c.start({{"/nonexistent/prog"}, {}, ""}));
}

}  // namespace
}  // namespace ucut::eval
