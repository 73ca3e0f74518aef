// Where an installed binary finds its files (support/paths.h): beside itself when the installed
// tree is there, else the source tree; UCUTLASS_CUTLASS_DIR always wins for CUTLASS.
#include "support/paths.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace ucut {
namespace {

TEST(Paths, AnInstalledTreeIsFoundBesideTheBinary) {
  const std::filesystem::path prefix = ::testing::TempDir() + "/paths_prefix" + std::to_string(::getpid());
  std::filesystem::create_directories(prefix / "bin");
  std::filesystem::create_directories(prefix / "share/ucutlass/runtime");
  EXPECT_EQ(paths_share_dir_for((prefix / "bin/ucutlass").string()), "") << "no runtime headers yet";
  std::ofstream(prefix / "share/ucutlass/runtime/simt_common.cuh") << "// header\n";
  EXPECT_EQ(paths_share_dir_for((prefix / "bin/ucutlass").string()), (prefix / "share/ucutlass").string());
  EXPECT_EQ(paths_share_dir_for(""), "");
  std::filesystem::remove_all(prefix);
}

TEST(Paths, TheBuildTreeFallsBackToTheSourceTree) {
  // Test binaries run from build/: no installed tree beside them.
  EXPECT_EQ(paths_runtime_dir(), std::string(UCUTLASS_SOURCE_DIR) + "/src/codegen/runtime");
  EXPECT_EQ(paths_python_dir(), std::string(UCUTLASS_SOURCE_DIR) + "/python");
}

TEST(Paths, TheCutlassVariableWins) {
  ::setenv("UCUTLASS_CUTLASS_DIR", "/opt/cutlass", 1);
  EXPECT_EQ(paths_cutlass_dir(), "/opt/cutlass");
  ::unsetenv("UCUTLASS_CUTLASS_DIR");
  EXPECT_EQ(paths_cutlass_dir(), UCUTLASS_CUTLASS_DIR);
}

}  // namespace
}  // namespace ucut
