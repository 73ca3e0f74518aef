// ucut_simt_benchgen: writes one standalone CUDA source per benchmark case of the non-GEMM stage
// emitters (rowwise, reduce, scan, elementwise) plus cases.json describing their tensors, for
// bench.py to build into .so files with nvcc and check/time against PyTorch on the GPU.
// Usage: ucut_simt_benchgen OUT_DIR [--small]   (--small: shapes for a quick correctness run)
// Each .cu holds a minimal stand-in for the library emitter (StageArgs, set_error, the functor
// block) and exports bench_workspace_bytes / bench_run / bench_error with C linkage.
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <map>
#include <variant>

#include <nlohmann/json.hpp>

#include "codegen/functors.h"
#include "codegen/stage_emitter.h"
#include "dsl/program.h"

using namespace ucut;
using dsl::DType;

namespace {

dsl::Tensor tensor(const std::string& name, dsl::TensorRole role, DType dt, std::vector<int64_t> shape) {
  dsl::Tensor t;
  t.name = name;
  t.role = role;
  t.dtype = dt;
  t.shape = std::move(shape);
  return t;
}

struct Case {
  std::string name;
  dsl::Program program;
  nlohmann::json ref;  // what bench.py computes with torch
};

const char* dt_name(DType d) {
  switch (d) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u8: return "u8";
    case DType::boolean: return "bool";
  }
  return "?";
}

dsl::ExprPtr load(const std::string& n, dsl::LoadMode m) {
  auto e = std::make_shared<dsl::Expr>();
  e->kind = dsl::Expr::Kind::load;
  e->name = n;
  e->mode = m;
  return e;
}
dsl::ExprPtr bin(dsl::BinOp op, dsl::ExprPtr a, dsl::ExprPtr b) {
  auto e = std::make_shared<dsl::Expr>();
  e->kind = dsl::Expr::Kind::binary;
  e->op = op;
  e->args = {a, b};
  return e;
}
dsl::ExprPtr fn(dsl::Fn f, dsl::ExprPtr a) {
  auto e = std::make_shared<dsl::Expr>();
  e->kind = dsl::Expr::Kind::unary;
  e->fn = f;
  e->args = {a};
  return e;
}
dsl::Epilogue store(const std::string& out, dsl::ExprPtr v) {
  dsl::EpilogueStmt s;
  s.kind = dsl::EpilogueStmt::Kind::store;
  s.name = out;
  s.value = v;
  return dsl::Epilogue{{s}};
}

Case rowwise(const std::string& name, const std::string& op, DType dt, int64_t rows, int64_t cols,
             int n_extra = 0, dsl::SimtKnobs knobs = {}) {
  Case c;
  c.name = name;
  auto& p = c.program;
  p.name = name;
  bool scalar = op == "logsumexp" || op == "sum" || op == "mean" || op == "max" || op == "min" ||
                op == "argmax" || op == "argmin";
  p.tensors.push_back(tensor("x", dsl::TensorRole::in, dt, {rows, cols}));
  dsl::RowwiseStage rs;
  rs.op = op;
  rs.input = "x";
  rs.knobs = knobs;
  const char* extra_names[] = {"w", "b"};
  for (int i = 0; i < n_extra; ++i) {
    p.tensors.push_back(tensor(extra_names[i], dsl::TensorRole::param, dt, {cols}));
    rs.extra.push_back(extra_names[i]);
  }
  DType odt = (op == "argmax" || op == "argmin") ? DType::i64 : dt;
  p.tensors.push_back(tensor("y", dsl::TensorRole::out, odt, scalar ? std::vector<int64_t>{rows}
                                                                   : std::vector<int64_t>{rows, cols}));
  dsl::Stage st;
  st.name = "s0";
  st.outputs = {"y"};
  st.body = rs;
  p.stages.push_back(st);
  c.ref = {{"kind", "rowwise"}, {"op", op}};
  return c;
}

Case reduce(const std::string& name, const std::string& op, DType dt, std::vector<int64_t> shape,
            std::vector<int> dims, std::vector<int64_t> out_shape, std::map<std::string, double> attrs = {}) {
  Case c;
  c.name = name;
  auto& p = c.program;
  p.name = name;
  p.tensors.push_back(tensor("x", dsl::TensorRole::in, dt, shape));
  dsl::ReduceStage rs;
  rs.op = op;
  rs.inputs = {"x"};
  rs.dims = dims;
  rs.attrs = attrs;
  if (op == "cross_entropy") {
    p.tensors.push_back(tensor("t", dsl::TensorRole::in, DType::i64, {shape[0]}));
    rs.inputs.push_back("t");
  } else if (op != "sum" && op != "mean" && op != "max" && op != "min" && op != "prod") {
    p.tensors.push_back(tensor("t", dsl::TensorRole::in, dt, shape));
    rs.inputs.push_back("t");
  }
  p.tensors.push_back(tensor("y", dsl::TensorRole::out, dt, out_shape));
  dsl::Stage st;
  st.name = "s0";
  st.outputs = {"y"};
  st.body = rs;
  p.stages.push_back(st);
  c.ref = {{"kind", "reduce"}, {"op", op}, {"dims", dims}, {"attrs", attrs}};
  return c;
}

Case scan(const std::string& name, const std::string& op, DType dt, std::vector<int64_t> shape, int dim,
          bool exclusive, bool reverse, bool mask) {
  Case c;
  c.name = name;
  auto& p = c.program;
  p.name = name;
  p.tensors.push_back(tensor("x", dsl::TensorRole::in, dt, shape));
  dsl::ScanStage sc;
  sc.op = op;
  sc.input = "x";
  sc.dim = dim;
  sc.exclusive = exclusive;
  sc.reverse = reverse;
  if (mask) {
    p.tensors.push_back(tensor("m", dsl::TensorRole::in, DType::boolean, shape));
    sc.mask = "m";
  }
  p.tensors.push_back(tensor("y", dsl::TensorRole::out, dt, shape));
  dsl::Stage st;
  st.name = "s0";
  st.outputs = {"y"};
  st.body = sc;
  p.stages.push_back(st);
  c.ref = {{"kind", "scan"}, {"op", op}, {"dim", dim}, {"exclusive", exclusive}, {"reverse", reverse}};
  return c;
}

// y = gelu(x + b[col]) * r   (b broadcast over rows, r of the output's shape)
Case elementwise(const std::string& name, DType dt, int64_t rows, int64_t cols) {
  Case c;
  c.name = name;
  auto& p = c.program;
  p.name = name;
  p.tensors.push_back(tensor("x", dsl::TensorRole::in, dt, {rows, cols}));
  p.tensors.push_back(tensor("b", dsl::TensorRole::in, dt, {cols}));
  p.tensors.push_back(tensor("r", dsl::TensorRole::in, dt, {rows, 1}));
  p.tensors.push_back(tensor("y", dsl::TensorRole::out, dt, {rows, cols}));
  dsl::ElementwiseStage es;
  es.body = store("y", bin(dsl::BinOp::mul,
                           fn(dsl::Fn::gelu, bin(dsl::BinOp::add, load("x", dsl::LoadMode::full),
                                                 load("b", dsl::LoadMode::full))),
                           load("r", dsl::LoadMode::full)));
  dsl::Stage st;
  st.name = "s0";
  st.outputs = {"y"};
  st.body = es;
  p.stages.push_back(st);
  c.ref = {{"kind", "elementwise"}, {"op", "gelu_bias_scale"}};
  return c;
}

const char* kPrelude = R"(#include <cuda_runtime.h>
#include <cstdarg>
#include <cstdio>
namespace ucut_rt {
struct StageArgs {
  void* const* tensors;
  const double* scalars;
  void* workspace;
  size_t workspace_bytes;
  cudaStream_t stream;
};
static char g_error[2048];
inline void set_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_error, sizeof g_error, fmt, ap);
  va_end(ap);
}
}  // namespace ucut_rt
)";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: ucut_simt_benchgen OUT_DIR [--small]\n";
    return 2;
  }
  const std::string dir = argv[1];
  const bool small = argc > 2 && std::string(argv[2]) == "--small";
  const int64_t k = small ? 16 : 1;  // divide the big shapes for a quick run
  std::vector<Case> cases;
  // the benchmark table (hundreds of MB each at full size)
  cases.push_back(rowwise("softmax", "softmax", DType::f32, 4096 / k, 16384));
  cases.push_back(rowwise("log_softmax", "log_softmax", DType::f32, 4096 / k, 16384));
  cases.push_back(rowwise("layer_norm", "layer_norm", DType::f32, 16384 / k, 4096, 2));
  cases.push_back(rowwise("rms_norm", "rms_norm", DType::f32, 16384 / k, 4096, 1));
  cases.push_back(rowwise("row_sum", "sum", DType::f32, 16384 / k, 8192));
  cases.push_back(rowwise("row_max", "max", DType::f32, 16384 / k, 8192));
  cases.push_back(reduce("col_sum", "sum", DType::f32, {16384 / k, 8192}, {0}, {8192}));
  cases.push_back(reduce("col_max", "max", DType::f32, {16384 / k, 8192}, {0}, {8192}));
  cases.push_back(reduce("reduce_row_sum", "sum", DType::f32, {16384 / k, 8192}, {1}, {16384 / k}));
  cases.push_back(scan("cumsum", "cumsum", DType::f32, {16384 / k, 4096}, 1, false, false, false));
  cases.push_back(reduce("mse", "mse", DType::f32, {8192 / k, 8192}, {}, {1}));
  cases.push_back(reduce("cross_entropy", "cross_entropy", DType::f32, {65536 / k, 1024}, {}, {1}));
  cases.push_back(elementwise("gelu_bias_scale", DType::f32, 16384 / k, 4096));
  // correctness-only variants: odd shapes, other dtypes, other code paths
  cases.push_back(rowwise("softmax_odd", "softmax", DType::f32, 37, 1000));
  cases.push_back(rowwise("softmax_long", "softmax", DType::f32, 8, 100000));
  cases.push_back(rowwise("log_softmax_short", "log_softmax", DType::f32, 4099, 64));
  cases.push_back(rowwise("layer_norm_bf16", "layer_norm", DType::bf16, 1000, 768, 2));
  cases.push_back(rowwise("rms_norm_f16", "rms_norm", DType::f16, 513, 4096, 1));
  cases.push_back(rowwise("logsumexp", "logsumexp", DType::f32, 300, 3000));
  cases.push_back(rowwise("argmax", "argmax", DType::f32, 300, 3001));
  cases.push_back(rowwise("l2_normalize", "l2_normalize", DType::f32, 100, 512));
  cases.push_back(reduce("sum_02", "sum", DType::f32, {16, 64, 49}, {0, 2}, {64}));
  cases.push_back(reduce("mean_1", "mean", DType::f32, {8, 1000, 33}, {1}, {8, 33}));
  cases.push_back(reduce("sum_all", "sum", DType::f32, {1000003}, {}, {1}));
  cases.push_back(reduce("huber", "huber", DType::f32, {1000, 999}, {}, {1}, {{"delta", 0.5}}));
  cases.push_back(reduce("smooth_l1_sum", "smooth_l1", DType::f32, {256, 4096}, {}, {1}, {{"reduction", 1}}));
  cases.push_back(reduce("kl_div", "kl_div", DType::f32, {128, 4096}, {}, {1}, {{"reduction", 2}}));
  cases.push_back(reduce("hinge", "hinge", DType::f32, {128, 1000}, {}, {1}));
  cases.push_back(reduce("l1", "l1", DType::f32, {4096, 4096}, {}, {1}));
  cases.push_back(reduce("cross_entropy_ignore", "cross_entropy", DType::f32, {1000, 37}, {}, {1}));
  cases.push_back(scan("cumsum_rev_excl_mask", "cumsum", DType::f32, {33, 10000}, 1, true, true, true));
  cases.push_back(scan("cumprod", "cumprod", DType::f32, {64, 100}, 1, false, false, false));
  cases.push_back(scan("cumsum_dim0", "cumsum", DType::f32, {1000, 3, 64}, 0, false, false, false));

  nlohmann::json manifest = nlohmann::json::array();
  int failures = 0;
  for (auto& c : cases) {
    const auto& body = c.program.stages[0].body;
    Result<codegen::StageCode> code =
        std::holds_alternative<dsl::RowwiseStage>(body)  ? codegen::codegen_emit_rowwise(c.program, 0)
        : std::holds_alternative<dsl::ReduceStage>(body) ? codegen::codegen_emit_reduce(c.program, 0)
        : std::holds_alternative<dsl::ScanStage>(body)   ? codegen::codegen_emit_scan(c.program, 0)
                                                         : codegen::codegen_emit_elementwise(c.program, 0);
    if (!code) {
      std::cerr << c.name << ": " << code.error().render() << "\n";
      ++failures;
      continue;
    }
    std::string src = "// generated by ucut_simt_benchgen for case " + c.name + "; do not edit\n";
    for (const auto& inc : code->includes) src += "#include \"" + inc + "\"\n";
    src += kPrelude + codegen::codegen_functors_source() + code->definitions;
    src += "extern \"C\" size_t bench_workspace_bytes() { return " + code->workspace_expr + "; }\n";
    src += "extern \"C\" const char* bench_error() { return ucut_rt::g_error; }\n";
    src += "extern \"C\" int bench_run(void* const* tensors, void* ws, size_t ws_bytes, void* stream) {\n"
           "  ucut_rt::StageArgs a{tensors, nullptr, ws, ws_bytes, static_cast<cudaStream_t>(stream)};\n"
           "  return " + code->launcher + "(a);\n}\n";
    std::ofstream(dir + "/" + c.name + ".cu") << src;
    nlohmann::json tensors = nlohmann::json::array();
    for (const auto& t : c.program.tensors)
      tensors.push_back({{"name", t.name}, {"dtype", dt_name(t.dtype)}, {"shape", t.shape},
                         {"role", t.role == dsl::TensorRole::out ? "out" : "in"}});
    manifest.push_back({{"name", c.name}, {"config", code->config_name}, {"tensors", tensors},
                        {"ref", c.ref}});
  }
  std::ofstream(dir + "/cases.json") << manifest.dump(1) << "\n";
  std::cout << "wrote " << manifest.size() << " cases to " << dir << "\n";
  return failures == 0 ? 0 : 1;
}
