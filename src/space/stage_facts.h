// The facts of a stage that validation and ranking need, read once from the checked program:
// GEMM extents, dtypes and epilogue traffic; for SIMT stages the data shape and bytes moved.
#pragma once

#include <cstdint>
#include <string>

#include "dsl/program.h"

namespace ucut::space {

struct GemmFacts {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int out_bytes = 4;          // bytes per output element
  int64_t ab_elems = 0;       // A and B elements (each read once at best)
  int64_t epi_read_bytes = 0; // residual, row and column vectors the epilogue reads
  int epi_ops = 0;            // expression nodes per output element (epilogue arithmetic)
  int reductions = 0;         // row/column reductions (fp32 atomics per tile row/column)
  bool full_load = false;     // the epilogue reads a full-size tensor (f32x3s: a pass of its own)
};

struct SimtFacts {
  std::string kind;           // the stage kind's word: rowwise, reduce, scan, elementwise, ...
  bool rows_kind = false;     // rowwise/reduce: rows_per_block applies
  int64_t last_dim = 1;       // the data's last dimension
  int64_t row_len = 1;        // a row kernel's row: the last dimension, or the kind's own (group_norm)
  int64_t total = 0;          // elements of the data
  int elem_bytes = 4;
  int64_t bytes = 0;          // every tensor the stage reads and writes, once
  bool per_row_outputs = false;  // every output holds at most one value a row (a row reduction)
};

GemmFacts gemm_facts(const dsl::Program& p, const dsl::GemmStage& g);
SimtFacts simt_facts(const dsl::Program& p, const dsl::Stage& st);

}  // namespace ucut::space
