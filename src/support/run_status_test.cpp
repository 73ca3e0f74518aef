#include "support/run_status.h"

#include <gtest/gtest.h>

namespace ucut {
namespace {

TEST(RunStatus, NamesRoundTrip) {
  for (RunStatus s : {RunStatus::ok, RunStatus::compile_error, RunStatus::launch_error, RunStatus::timeout,
                      RunStatus::mismatch, RunStatus::rejected}) {
    auto back = run_status_parse(run_status_name(s));
    ASSERT_TRUE(back) << run_status_name(s);
    EXPECT_EQ(*back, s);
  }
  EXPECT_STREQ(run_status_name(RunStatus::compile_error), "compile_error");
}

TEST(RunStatus, UnknownNamesAreRefusedWithTheClosest) {
  EXPECT_FALSE(run_status_parse("OK"));
  EXPECT_FALSE(run_status_parse(""));
  auto r = run_status_from_name("mismach");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::invalid_input);
  EXPECT_NE(r.error().hint.find("mismatch"), std::string::npos) << r.error().hint;
}

}  // namespace
}  // namespace ucut
