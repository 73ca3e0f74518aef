#include "support/fs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace ucut {
namespace {

// An old journal, log or cassette is kept beside, numbered, never overwritten (driver.cpp's
// journal, the agent's agent.jsonl and llm-cassette.jsonl).
TEST(Fs, SetAsideKeepsTheOldFileUnderTheFirstFreeNumber) {
  const std::string dir = ::testing::TempDir() + "/fs-aside-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(fs_mkdirs(dir));
  const std::string path = dir + "/attempts.jsonl";
  EXPECT_TRUE(fs_set_aside(path));  // nothing there: nothing to do
  EXPECT_FALSE(fs_exists(dir + "/attempts.1.jsonl"));
  ASSERT_TRUE(fs_write_atomic(path, "first\n"));
  ASSERT_TRUE(fs_set_aside(path));
  ASSERT_TRUE(fs_write_atomic(path, "second\n"));
  ASSERT_TRUE(fs_set_aside(path));
  EXPECT_FALSE(fs_exists(path));
  EXPECT_EQ(*fs_read(dir + "/attempts.1.jsonl"), "first\n");
  EXPECT_EQ(*fs_read(dir + "/attempts.2.jsonl"), "second\n");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ucut
