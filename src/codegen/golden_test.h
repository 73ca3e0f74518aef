// The codegen tests' golden check (library_test, conv_test, window_test): the library a program
// generates must equal tests/golden/codegen/<name>.cu byte for byte; UCUTLASS_UPDATE_GOLDEN=1
// writes the file instead (only for new goldens: a changed one is a change to explain).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "codegen/library.h"
#include "dsl/program.h"
#include "support/fs.h"

namespace ucut::codegen {

inline std::string golden_dir() { return std::string(UCUTLASS_SOURCE_DIR) + "/tests/golden/codegen/"; }

inline void check_golden(const dsl::Program& p) {
  auto lib = codegen_emit_library(p, {p.name + ".ucut", std::string(64, '0')});
  ASSERT_TRUE(lib.ok()) << lib.error().render();
  std::string path = golden_dir() + p.name + ".cu";
  if (std::getenv("UCUTLASS_UPDATE_GOLDEN")) {
    ASSERT_TRUE(fs_write_atomic(path, lib->source).ok());
    return;
  }
  auto want = fs_read(path);
  ASSERT_TRUE(want.ok()) << "missing golden " << path << "; run with UCUTLASS_UPDATE_GOLDEN=1";
  EXPECT_EQ(*want, lib->source) << "generated code changed: " << path;
}

}  // namespace ucut::codegen
