#include "codegen/simt_common.h"

#include <fmt/format.h>

#include "codegen/functors.h"
#include "dsl/names.h"
#include "support/diagnostics.h"
#include "support/paths.h"

namespace ucut::codegen {

std::string simt_runtime_include_dir() { return paths_runtime_dir(); }

std::vector<std::string> simt_runtime_headers() {
  std::vector<std::string> out;
  for (const char* f :
       {"simt_common.cuh", "simt_reduce.cuh", "simt_rowwise.cuh", "simt_scan.cuh", "attention.cuh", "attention_sm90.cuh",
        "gemv.cuh", "gemm_f32x3w.cuh", "gemm_f32x3w_rs.cuh"})
    out.push_back(simt_runtime_include_dir() + "/" + f);
  return out;
}

const char* simt_cuda_type(dsl::DType t) {
  switch (t) {
    case dsl::DType::f32: return "float";
    case dsl::DType::f16: return "__half";
    case dsl::DType::bf16: return "__nv_bfloat16";
    case dsl::DType::i32: return "int";
    case dsl::DType::i64: return "long long";
    case dsl::DType::u8: return "unsigned char";
    case dsl::DType::boolean: return "bool";
  }
  return "float";
}

const char* simt_dtype_name(dsl::DType t) {
  switch (t) {
    case dsl::DType::f32: return "f32";
    case dsl::DType::f16: return "f16";
    case dsl::DType::bf16: return "bf16";
    case dsl::DType::i32: return "i32";
    case dsl::DType::i64: return "i64";
    case dsl::DType::u8: return "u8";
    case dsl::DType::boolean: return "bool";
  }
  return "?";
}

bool simt_is_float(dsl::DType t) {
  return t == dsl::DType::f32 || t == dsl::DType::f16 || t == dsl::DType::bf16;
}

std::string simt_prefix(int stage_index) { return fmt::format("ucut_s{}_", stage_index); }

int simt_tensor_index(const dsl::Program& p, const std::string& name) {
  for (size_t i = 0; i < p.tensors.size(); ++i)
    if (p.tensors[i].name == name) return static_cast<int>(i);
  return -1;
}

int simt_scalar_index(const dsl::Program& p, const std::string& name) {
  for (size_t i = 0; i < p.scalars.size(); ++i)
    if (p.scalars[i].name == name) return static_cast<int>(i);
  return -1;
}

const dsl::Stage& simt_stage(const dsl::Program& program, int stage_index) {
  UCUT_CHECK(stage_index >= 0 && stage_index < static_cast<int>(program.stages.size()),
             "stage index out of range");
  return program.stages[stage_index];
}

std::string simt_stage_label(const dsl::Program& program, int stage_index) {
  return "stage " + simt_stage(program, stage_index).name;
}

static int field_of(std::vector<std::string>& v, const std::string& name) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] == name) return static_cast<int>(i);
  v.push_back(name);
  return static_cast<int>(v.size()) - 1;
}

Result<std::string> simt_render_expr(const dsl::Expr& e, const ExprEnv& env) {
  using K = dsl::Expr::Kind;
  switch (e.kind) {
    case K::acc:
      if (env.acc.empty())
        return make_error(ErrorCode::invalid_input, "`acc` has no value in the " + env.what,
                          "name the tensors to read instead");
      return env.acc;
    case K::constant: return codegen_float_literal(e.value);
    case K::scalar: {
      if (simt_scalar_index(*env.program, e.name) < 0)
        return make_error(ErrorCode::invalid_input,
                          "unknown scalar '" + e.name + "' in the " + env.what);
      return "s" + std::to_string(field_of(*env.scalars, e.name));
    }
    case K::load: {
      const dsl::Tensor* t = env.program->find_tensor(e.name);
      if (!t)
        return make_error(ErrorCode::invalid_input,
                          "unknown tensor '" + e.name + "' in the " + env.what);
      std::string field = "t" + std::to_string(field_of(*env.fields, e.name));
      return env.render_load(e, field, *t);
    }
    case K::local: return "l_" + e.name;
    case K::index: {
      const std::string& i = e.mode == dsl::LoadMode::row ? env.index.row : env.index.col;
      if (i.empty())
        return make_error(ErrorCode::invalid_input,
                          std::string("`") + (e.mode == dsl::LoadMode::row ? "row" : "col") +
                              "` has no value in the " + env.what,
                          "use the element's position in rowwise and elementwise stages");
      return "static_cast<float>(" + i + ")";
    }
    case K::unary: {
      UCUT_CHECK(e.args.size() == 1, "unary expression arity");
      auto a = simt_render_expr(*e.args[0], env);
      if (!a) return a.error();
      return codegen_fn_call(e.fn, {*a}, e.params);
    }
    case K::binary: {
      UCUT_CHECK(e.args.size() == 2, "binary expression arity");
      auto a = simt_render_expr(*e.args[0], env);
      if (!a) return a.error();
      auto b = simt_render_expr(*e.args[1], env);
      if (!b) return b.error();
      const char* op = e.op == dsl::BinOp::add ? "+" : e.op == dsl::BinOp::sub ? "-"
                       : e.op == dsl::BinOp::mul ? "*" : "/";
      return "(" + *a + " " + op + " " + *b + ")";
    }
    case K::call: {
      std::vector<std::string> args;
      for (const auto& arg : e.args) {
        auto a = simt_render_expr(*arg, env);
        if (!a) return a.error();
        args.push_back(*a);
      }
      return codegen_fn_call(e.fn, args, e.params);
    }
  }
  return make_error(ErrorCode::internal, "unknown expression kind");
}

Result<FunctorCode> simt_emit_functor(const dsl::Program& program, const dsl::Epilogue& epi,
                                      const std::string& name, const std::string& what,
                                      const LoadRenderer& render_load, const IndexExprs& index) {
  if (epi.stmts.empty()) return FunctorCode{"ucut_simt::Identity", "", "ucut_simt::Identity{}"};
  std::vector<std::string> fields, scalars;
  ExprEnv env{&program, "acc", what, &fields, &scalars, render_load, index};
  std::string body;
  int stores = 0;
  for (const auto& st : epi.stmts) {
    if (st.kind == dsl::EpilogueStmt::Kind::reduce)
      return make_error(ErrorCode::unsupported,
                        "row/column reductions are not supported in the " + what,
                        "use a separate rowwise or reduce stage");
    auto v = simt_render_expr(*st.value, env);
    if (!v) return v.error();
    if (st.kind == dsl::EpilogueStmt::Kind::let) {
      body += "    const float l_" + st.name + " = " + *v + ";\n";
    } else {
      if (++stores > 1)
        return make_error(ErrorCode::invalid_input, "the " + what + " stores more than one value",
                          "keep one final expression");
      body += "    return " + *v + ";\n";
    }
  }
  if (stores == 0)
    return make_error(ErrorCode::invalid_input, "the " + what + " stores no value",
                      "end it with the expression to use");
  std::string def = "struct " + name + " {\n";
  std::string init = name + "{";
  bool first = true;
  for (size_t i = 0; i < fields.size(); ++i) {
    def += fmt::format("  const void* t{};  // {}\n", i, fields[i]);
    init += (first ? "" : ", ") + fmt::format("args.tensors[{}]", simt_tensor_index(program, fields[i]));
    first = false;
  }
  for (size_t i = 0; i < scalars.size(); ++i) {
    def += fmt::format("  float s{};  // {}\n", i, scalars[i]);
    init += (first ? "" : ", ") +
            fmt::format("static_cast<float>(args.scalars[{}])", simt_scalar_index(program, scalars[i]));
    first = false;
  }
  def += "  __device__ __forceinline__ float operator()(float acc, long long row, long long col) const {\n";
  def += "    (void)acc; (void)row; (void)col;\n";
  def += body + "  }\n};\n";
  init += "}";
  return FunctorCode{name, def, init};
}

IndexExprs simt_matrix_index(const std::vector<int64_t>& shape, const std::string& flat_row, const std::string& col) {
  const int64_t r = dsl::dsl_matrix_rows(shape);
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
  return {r == 1 ? "0" : rows == r ? flat_row : fmt::format("({} % {}LL)", flat_row, r), col};
}

std::string simt_element_offset(const std::vector<int64_t>& walk, const std::vector<int64_t>& ts,
                                const std::vector<int64_t>& st, bool small, const std::string& var) {
  std::string idx;
  int64_t div = 1;
  for (size_t k = 0; k < walk.size(); ++k) {
    const int64_t oe = walk[walk.size() - 1 - k];
    const int64_t stride = k < ts.size() ? st[ts.size() - 1 - k] : 0;
    if (k < ts.size() && ts[ts.size() - 1 - k] != 1 && oe != 1 && stride != 0)
      idx += (idx.empty() ? "" : " + ") +
             (small ? fmt::format("(long long)((unsigned){} / {}u % {}u) * {}LL", var, div, oe, stride)
                    : fmt::format("(({} / {}LL) % {}LL) * {}LL", var, div, oe, stride));
    div *= oe;
  }
  return idx.empty() ? "0" : idx;
}

std::string simt_broadcast_offset(const std::vector<int64_t>& out, const std::vector<int64_t>& ts,
                                  const std::string& var) {
  std::vector<int64_t> contiguous(ts.size(), 1);
  for (size_t d = ts.size(); d-- > 1;) contiguous[d - 1] = contiguous[d] * ts[d];
  return simt_element_offset(out, ts, contiguous, false, var);
}

std::string simt_launch_check(const std::string& stage_name) {
  return fmt::format(
      "  {{\n    cudaError_t e = cudaGetLastError();\n"
      "    if (e != cudaSuccess) {{\n"
      "      ucut_rt::set_error(\"{}: kernel launch failed: %s\", cudaGetErrorString(e));\n"
      "      return 4;\n    }}\n  }}\n",
      stage_name);
}

std::string simt_banner(const dsl::Program& program, int stage_index, const std::string& kind) {
  const auto& st = simt_stage(program, stage_index);
  // No program name: the same stage in another program is the same text (one cached object).
  return fmt::format("// stage {} ({}): generated by ucutlass; do not edit\n", st.name, kind);
}

}  // namespace ucut::codegen
