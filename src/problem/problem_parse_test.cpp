// problem_parse: a valid document round-trips into the structs; every kind of bad input gets an
// exact message naming the JSON path (and a hint where one helps).
#include "problem/problem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace ucut::problem {
namespace {

using nlohmann::json;

json valid() {
  return json::parse(R"({
    "schema": "ucutlass.problem/1", "name": "gemm_bias_gelu", "source": "problems/gemm_bias_gelu.py",
    "doc": "x @ W.T + b, then GELU", "init_seed": 42, "torch_version": "2.11.0",
    "tensors": [
      {"name": "x", "kind": "input", "dtype": "f32", "shape": [1024, 8192], "index": 0},
      {"name": "linear.weight", "kind": "parameter", "dtype": "f32", "shape": [8192, 8192], "state_dict": "linear.weight"},
      {"name": "linear.bias", "kind": "parameter", "dtype": "f32", "shape": [8192], "state_dict": "linear.bias"},
      {"name": "c0", "kind": "constant", "dtype": "f32", "shape": [], "value": 0.5},
      {"name": "t0", "kind": "intermediate", "dtype": "f32", "shape": [1024, 8192]},
      {"name": "out0", "kind": "output", "dtype": "f32", "shape": [1024, 8192], "index": 0}
    ],
    "ops": [
      {"id": 0, "op": "linear", "inputs": ["x", "linear.weight", "linear.bias"], "outputs": ["t0"],
       "attrs": {}, "flops": 137447342080, "flop_class": "tensor", "line": 18},
      {"id": 1, "op": "gelu", "inputs": ["t0", {"scalar": 2}], "outputs": ["out0"],
       "attrs": {"approximate": "none"}, "flops": 67108864, "flop_class": "simt", "line": 19}
    ],
    "inputs": ["x"], "outputs": ["out0"], "init_args": [1024, 8192], "extra_inputs": [],
    "a_future_field": {"ignored": true}
  })");
}

std::string error_of(const json& j) {
  auto r = problem_parse(j.dump(), "p.json");
  if (r.ok()) return "(accepted)";
  return r.error().render();
}

TEST(ProblemParse, ValidDocument) {
  auto r = problem_parse(valid().dump(), "p.json");
  ASSERT_TRUE(r.ok()) << r.error().render();
  const Problem& p = *r;
  EXPECT_EQ(p.name, "gemm_bias_gelu");
  EXPECT_EQ(p.init_seed, 42);
  ASSERT_EQ(p.tensors.size(), 6u);
  EXPECT_EQ(p.tensors[1].kind, TensorKind::parameter);
  EXPECT_EQ(p.tensors[1].state_dict, "linear.weight");
  EXPECT_EQ(p.tensors[1].bytes(), int64_t(8192) * 8192 * 4);
  EXPECT_EQ(p.tensors[3].numel(), 1);  // scalar
  EXPECT_EQ(*p.tensors[3].value, 0.5);
  ASSERT_EQ(p.ops.size(), 2u);
  EXPECT_EQ(p.ops[0].flops, 137447342080);
  EXPECT_EQ(p.ops[0].flop_class, FlopClass::tensor);
  EXPECT_EQ(p.ops[0].line, 18);
  ASSERT_EQ(p.ops[1].inputs.size(), 2u);
  EXPECT_FALSE(p.ops[1].inputs[1].is_tensor());
  EXPECT_EQ(*p.ops[1].inputs[1].scalar, 2.0);
  EXPECT_EQ(p.ops[1].attrs["approximate"], "none");
  EXPECT_EQ(p.find_tensor("out0")->index, 0);
  EXPECT_EQ(p.find_tensor("nope"), nullptr);
}

// An absent optional operand before a present one is JSON null: neither a tensor nor a scalar.
TEST(ProblemParse, AbsentOperandIsNull) {
  json j = valid();
  j["ops"][1]["inputs"][1] = nullptr;
  auto p = problem_parse(j.dump(), "p.json");
  ASSERT_TRUE(p.ok()) << p.error().render();
  const Operand& o = p->ops[1].inputs[1];
  EXPECT_TRUE(o.is_absent());
  EXPECT_FALSE(o.is_tensor());
  EXPECT_FALSE(o.scalar.has_value());
  EXPECT_FALSE(p->ops[1].inputs[0].is_absent());
  j["ops"][1]["inputs"][0] = 3;
  EXPECT_EQ(error_of(j), "p.json: ops[1].inputs[0]: expected a tensor name, {\"scalar\": number} or null, found a number");
}

// Non-finite numbers are the strings "inf", "-inf", "nan" (JSON has no literal for them): a causal
// mask's masked_fill(..., float('-inf')) used to make the whole document invalid JSON.
TEST(ProblemParse, NonFiniteNumbersAreStrings) {
  json j = valid();
  j["ops"][1]["inputs"][1] = json::parse(R"({"scalar": "-inf"})");
  j["tensors"][3]["value"] = "nan";
  j["tensors"].push_back(json::parse(
      R"({"name": "lit", "kind": "constant", "dtype": "f32", "shape": [2, 2], "value": [["-inf", 0], [1.5, "inf"]]})"));
  j["ops"][0]["from"] = "einsum('ik,nk->in')";
  auto r = problem_parse(j.dump(), "p.json");
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_EQ(*r->ops[1].inputs[1].scalar, -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(*r->tensors[3].value));
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(r->find_tensor("lit")->values, (std::vector<double>{-inf, 0, 1.5, inf}));
  EXPECT_FALSE(r->find_tensor("lit")->value.has_value());
  EXPECT_EQ(r->ops[0].from, "einsum('ik,nk->in')");
  EXPECT_EQ(r->ops[1].from, "");
  EXPECT_EQ(problem_number(json("inf")), inf);
  EXPECT_FALSE(problem_number(json("Infinity")).has_value());
  EXPECT_FALSE(problem_number(json::array()).has_value());

  j["tensors"].back()["value"] = json::parse(R"([["-inf", 0], [1.5]])");
  EXPECT_EQ(error_of(j), "p.json: tensors[6].value: a literal of 3 elements for a tensor of 4");
  j["tensors"].back()["value"] = json::parse(R"([["-inf", 0], [1.5, "-Infinity"]])");
  EXPECT_EQ(error_of(j), "p.json: tensors[6].value[1][1]: expected a number (or \"inf\", \"-inf\", \"nan\"), "
                         "found '-Infinity'");
}

// A buffer's triangular structure (extraction found tril/triu of ones) reads into Tensor::triangle;
// a malformed one is named by its path.
TEST(ProblemParse, TriangularStructure) {
  json j = valid();
  j["tensors"].push_back(json::parse(R"({"name": "mask", "kind": "buffer", "dtype": "f32", "shape": [1, 1, 8, 8],
                                         "state_dict": "mask", "structure": {"kind": "tril", "diagonal": 0}})"));
  auto r = problem_parse(j.dump(), "p.json");
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_TRUE(r->find_tensor("mask")->triangle.has_value());
  EXPECT_TRUE(r->find_tensor("mask")->triangle->lower);
  EXPECT_EQ(r->find_tensor("mask")->triangle->diagonal, 0);
  EXPECT_FALSE(r->find_tensor("x")->triangle.has_value());
  j["tensors"].back()["structure"] = json::parse(R"({"kind": "triu", "diagonal": -2})");
  r = problem_parse(j.dump(), "p.json");
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_FALSE(r->find_tensor("mask")->triangle->lower);
  EXPECT_EQ(r->find_tensor("mask")->triangle->diagonal, -2);

  j["tensors"].back()["structure"] = json::parse(R"({"kind": "band", "diagonal": 0})");
  EXPECT_EQ(error_of(j), "p.json: tensors[6].structure.kind: unknown structure kind 'band'\n"
                         "hint: structures are tril and triu");
  j["tensors"].back()["structure"] = json::parse(R"({"kind": "tril"})");
  EXPECT_EQ(error_of(j), "p.json: tensors[6].structure: missing field 'diagonal'");
  j["tensors"].back()["structure"] = json::parse(R"({"kind": "tril", "diagonal": 0})");
  j["tensors"].back()["shape"] = json::parse("[2, 8, 8]");
  EXPECT_EQ(error_of(j), "p.json: tensors[6].structure: a triangular structure needs every dim but the last two to be 1");
  j["tensors"].back()["shape"] = json::parse("[1, 1, 8, 8]");
  j["tensors"].back()["kind"] = "parameter";
  EXPECT_EQ(error_of(j),
            "p.json: tensors[6].structure: only a buffer or a constant has a structure (its values are fixed by the "
            "problem)");
}

TEST(ProblemParse, UnknownSchemaVersion) {
  json j = valid();
  j["schema"] = "ucutlass.problem/2";
  EXPECT_EQ(error_of(j),
            "p.json: schema: unknown schema version 'ucutlass.problem/2'; this ucutlass reads 'ucutlass.problem/1'\n"
            "hint: re-extract the problem with the ucutlass_torch that matches this ucutlass");
  j.erase("schema");
  EXPECT_EQ(error_of(j), "p.json: schema: missing field 'schema'; this ucutlass reads 'ucutlass.problem/1'");
}

TEST(ProblemParse, UnknownTensorInOp) {
  json j = valid();
  j["ops"][1]["inputs"][0] = "t9";
  EXPECT_EQ(error_of(j), "p.json: ops[1].inputs[0]: unknown tensor 't9'\nhint: did you mean 't0'?");
  j["ops"][1]["inputs"][0] = "hidden_states";
  EXPECT_EQ(error_of(j), "p.json: ops[1].inputs[0]: unknown tensor 'hidden_states'");
  j = valid();
  j["ops"][0]["outputs"][0] = "out1";
  EXPECT_EQ(error_of(j), "p.json: ops[0].outputs[0]: unknown tensor 'out1'\nhint: did you mean 'out0'?");
}

TEST(ProblemParse, BadShapes) {
  json j = valid();
  j["tensors"][0]["shape"] = json::parse("[1024, -3]");
  EXPECT_EQ(error_of(j), "p.json: tensors[0].shape[1]: expected a non-negative integer, found -3");
  j["tensors"][0]["shape"] = json::parse("[1024, 2.5]");
  EXPECT_EQ(error_of(j), "p.json: tensors[0].shape[1]: expected an integer, found 2.5");
  j["tensors"][0]["shape"] = "1024x8192";
  EXPECT_EQ(error_of(j), "p.json: tensors[0].shape: expected an array, found a string");
  j["tensors"][0]["shape"] = json::parse("[4294967296, 4294967296]");
  EXPECT_EQ(error_of(j), "p.json: tensors[0].shape: tensor is too large (more than 2^62 bytes)");
}

TEST(ProblemParse, DuplicateNames) {
  json j = valid();
  j["tensors"][4]["name"] = "x";
  EXPECT_EQ(error_of(j),
            "p.json: tensors[4].name: duplicate tensor name 'x' (first defined at tensors[0])\n"
            "hint: tensor names must be unique");
}

TEST(ProblemParse, BadKindsAndDtypes) {
  json j = valid();
  j["tensors"][0]["dtype"] = "float32";
  EXPECT_EQ(error_of(j), "p.json: tensors[0].dtype: unknown dtype 'float32'\n"
                         "hint: dtypes are f16, bf16, f32, f64, i8, i16, i32, i64, u8, bool");
  j["tensors"][0]["dtype"] = "bf1";
  EXPECT_EQ(error_of(j), "p.json: tensors[0].dtype: unknown dtype 'bf1'\nhint: did you mean 'bf16'?");
  j = valid();
  j["tensors"][1]["kind"] = "param";
  EXPECT_EQ(error_of(j), "p.json: tensors[1].kind: unknown tensor kind 'param'\n"
                         "hint: kinds are input, parameter, buffer, intermediate, output, constant");
  j["tensors"][1]["kind"] = "paramter";
  EXPECT_EQ(error_of(j), "p.json: tensors[1].kind: unknown tensor kind 'paramter'\nhint: did you mean 'parameter'?");
}

TEST(ProblemParse, OpFields) {
  json j = valid();
  j["ops"][1]["id"] = 5;
  EXPECT_EQ(error_of(j), "p.json: ops[1].id: expected 1 (the op's position), found 5");
  j = valid();
  j["ops"][0]["flops"] = -1;
  EXPECT_EQ(error_of(j), "p.json: ops[0].flops: expected a non-negative integer, found -1");
  j = valid();
  j["ops"][0]["flop_class"] = "tc";
  EXPECT_EQ(error_of(j), "p.json: ops[0].flop_class: unknown FLOP class 'tc'\n"
                         "hint: use 'tensor' (tensor-core eligible) or 'simt'");
  j = valid();
  j["ops"][0].erase("flops");
  EXPECT_EQ(error_of(j), "p.json: ops[0]: missing field 'flops'");
  j = valid();
  j["ops"][1]["inputs"][1] = json::parse(R"({"scalar": "two"})");
  EXPECT_EQ(error_of(j), "p.json: ops[1].inputs[1].scalar: expected a number (or \"inf\", \"-inf\", \"nan\"), found 'two'");
  j["ops"][1]["inputs"][1] = 7;
  EXPECT_EQ(error_of(j), "p.json: ops[1].inputs[1]: expected a tensor name, {\"scalar\": number} or null, found a number");
}

TEST(ProblemParse, OrderAndTopLevelLists) {
  json j = valid();
  std::swap(j["ops"][0], j["ops"][1]);
  j["ops"][0]["id"] = 0;
  j["ops"][1]["id"] = 1;
  EXPECT_EQ(error_of(j), "p.json: ops[0].inputs[0]: intermediate tensor 't0' is read before any op produces it\n"
                         "hint: ops must be listed in execution order");
  j = valid();
  j["inputs"][0] = "linear.weight";
  EXPECT_EQ(error_of(j), "p.json: inputs[0]: tensor 'linear.weight' is listed as an input but its kind is 'parameter'\n"
                         "hint: problem inputs must have kind 'input'");
  j = valid();
  j["outputs"][0] = "t0";
  EXPECT_EQ(error_of(j), "p.json: outputs[0]: tensor 't0' is listed as an output but its kind is 'intermediate'\n"
                         "hint: a returned tensor must have kind 'output' (or 'input' when returned unchanged)");
  j = valid();
  j.erase("tensors");
  EXPECT_EQ(error_of(j), "p.json: tensors: missing field 'tensors'");
  j = valid();
  j["ops"].erase(1);
  EXPECT_EQ(error_of(j), "p.json: outputs[0]: output 'out0' is never produced by an op");
}

TEST(ProblemParse, NotJson) {
  auto r = problem_parse("{\"schema\": ", "p.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::invalid_input);
  EXPECT_EQ(r.error().message.rfind("p.json: invalid JSON: ", 0), 0u) << r.error().message;
  EXPECT_EQ(error_of(json::array()), "p.json: (document): expected an object, found an array");
}

TEST(ProblemLoad, MissingFile) {
  auto r = problem_load("/nonexistent/problem.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::not_found);
}

}  // namespace
}  // namespace ucut::problem
