// The Problem IR in memory: one KernelBench-format problem as named tensors and an op list at
// ATen-like granularity (docs/problem-ir.md, schema "ucutlass.problem/1"). The Python extractor
// writes it as JSON; problem_parse reads and validates it, so every consumer (SOL, lowering,
// evaluation) may assume names resolve, shapes are well-formed and ids are in order.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/result.h"

namespace ucut::problem {

inline constexpr const char* kSchema = "ucutlass.problem/1";

enum class DType { f16, bf16, f32, f64, i8, i16, i32, i64, u8, boolean };

const char* dtype_name(DType t);                          // "f32", "bool", ...
std::optional<DType> dtype_from_name(const std::string& name);
const std::vector<std::string>& dtype_names();            // every name, for "did you mean"
int dtype_bytes(DType t);
bool dtype_is_16bit_float(DType t);                       // f16, bf16: tensor cores at BF16 rate

enum class TensorKind { input, parameter, buffer, intermediate, output, constant };

// A number as problem.json writes it: a JSON number, or one of the strings "inf", "-inf", "nan" that
// stand for the values JSON has no literal for (docs/problem-ir.md). nullopt for anything else.
std::optional<double> problem_number(const nlohmann::json& j);

const char* tensor_kind_name(TensorKind k);
std::optional<TensorKind> tensor_kind_from_name(const std::string& name);

struct Tensor {
  std::string name;
  TensorKind kind = TensorKind::input;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;          // [] is a scalar tensor
  std::optional<int> index;            // input / output position
  std::string state_dict;              // parameter / buffer key
  std::optional<double> value;         // constant: the fill value when known
  std::vector<double> values;          // constant: a small literal tensor's elements, row-major
  // buffer / constant: the values extraction found, when they are a triangle of ones over the last
  // two dims (zeros elsewhere; every leading dim 1): tril(ones, diagonal) when `lower`, else
  // triu(ones, diagonal). The lowering folds masks built from it (docs/problem-ir.md, "structure").
  struct Triangle {
    bool lower = true;
    int64_t diagonal = 0;
  };
  std::optional<Triangle> triangle;

  int64_t numel() const;
  int64_t bytes() const { return numel() * dtype_bytes(dtype); }
};

// An op operand: a tensor by name, a Python number baked into the op, or absent (an optional
// operand left out before a present one, JSON null: neither a tensor nor a scalar).
struct Operand {
  std::string tensor;                  // empty when scalar or absent
  std::optional<double> scalar;
  bool is_tensor() const { return !scalar.has_value() && !tensor.empty(); }
  bool is_absent() const { return !scalar.has_value() && tensor.empty(); }
};

enum class FlopClass { tensor, simt };

struct Op {
  int id = 0;
  std::string op;                      // "linear", "gelu", "opaque", ...
  std::vector<Operand> inputs;
  std::vector<std::string> outputs;
  nlohmann::json attrs = nlohmann::json::object();
  int64_t flops = 0;
  FlopClass flop_class = FlopClass::simt;
  int line = 0;
  std::string from;                    // the call this op was written out from ("einsum('ij,jk->ik')"), or ""
};

struct Problem {
  std::string schema = kSchema;
  std::string name;
  std::string source;
  std::string source_sha256;
  std::string doc;
  int64_t init_seed = 42;
  std::string torch_version;
  std::vector<Tensor> tensors;
  std::vector<Op> ops;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  nlohmann::json init_args = nlohmann::json::array();
  nlohmann::json extra_inputs = nlohmann::json::array();

  const Tensor* find_tensor(const std::string& name) const;
};

// Parses and validates a problem.json document. `path` only names the file in messages.
// Errors are ErrorCode::invalid_input with messages "<path>: <json path>: <what>", e.g.
// "p.json: ops[3].inputs[1]: unknown tensor 't9'", plus a hint where one helps.
Result<Problem> problem_parse(const std::string& json_text, const std::string& path);

// Reads the file and parses it (ErrorCode::io / not_found when it cannot be read).
Result<Problem> problem_load(const std::string& path);

}  // namespace ucut::problem
