// The op cost model: FLOPs per class and minimum DRAM bytes of a Problem (EVAL-CONTRACT §4).
// FLOPs come from the IR's per-op counts (docs/problem-ir.md convention); for the matmul family,
// convolutions and sdpa they are recomputed from the shapes, and a disagreeing IR count is noted
// and replaced. min_bytes is every input, parameter, buffer and output read or written once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "problem/problem.h"
#include "support/result.h"

namespace ucut::sol {

// Which peak a FLOP is divided by.
enum class CostClass {
  tensor_f32,  // tensor-core eligible on fp32 (or other non-16-bit) data: the policy's rate
  tensor_16,   // tensor-core eligible on f16/bf16 data: the BF16 rate under every policy
  simt,        // everything else: the FP32 SIMT rate
};

const char* cost_class_name(CostClass c);

struct OpCost {
  int id = 0;
  std::string op;
  int line = 0;
  CostClass cls = CostClass::simt;
  int64_t flops = 0;
  int64_t bytes = 0;  // this op alone, unfused: its distinct tensor operands read + outputs written
};

struct ProblemCost {
  std::string name;
  int64_t flops_tensor_f32 = 0;
  int64_t flops_tensor_16 = 0;
  int64_t flops_simt = 0;
  int64_t min_bytes = 0;          // inputs, parameters, buffers (that ops read) + outputs, once each
  int64_t tensor_bytes = 0;       // every input, parameter, buffer and output, once: what the GPU must hold
  std::vector<OpCost> ops;
  std::vector<std::string> notes; // e.g. IR FLOP counts replaced by the recomputed ones

  int64_t flops_total() const { return flops_tensor_f32 + flops_tensor_16 + flops_simt; }
  int64_t flops_tensor() const { return flops_tensor_f32 + flops_tensor_16; }
};

// Costs a validated Problem. Errors (ErrorCode::invalid_input) name the op when matmul-family
// operand shapes disagree ("ops[2] (mm): operands disagree on K: ...").
Result<ProblemCost> sol_problem_cost(const problem::Problem& p);

// The recomputed FLOPs of a matmul-family / conv / sdpa op, or -1 for ops outside that family.
// Errors when the shapes are inconsistent.
Result<int64_t> sol_tensor_op_flops(const problem::Problem& p, const problem::Op& op);

}  // namespace ucut::sol
