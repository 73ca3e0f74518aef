// Rules of SIMT-stage knobs shared by the code generator (codegen/simt_heuristics.cpp, which
// refuses what breaks them) and the search space (space/validate.cpp, which never offers it).
#pragma once

namespace ucut::dsl {

// Several rows per block split the block into one group of lanes per row: a power of two of at
// most 32 lanes (a warp or less). One row per block takes the whole block.
inline bool simt_row_group_ok(int threads, int rows_per_block) {
  if (rows_per_block < 1 || threads % rows_per_block != 0) return false;
  if (rows_per_block == 1) return true;
  const int g = threads / rows_per_block;
  return g <= 32 && (g & (g - 1)) == 0;
}

}  // namespace ucut::dsl
