// The canonical printer (what `ucutlass fmt` writes), the program hash and the generated
// function table. Canonical text: declarations in order, scalars after them, every knob written
// (auto where unset), defaults of function parameters and stage settings filled in, one
// statement per line, parentheses only where precedence needs them.
#include <algorithm>

#include "dsl/dsl.h"
#include "dsl/kinds/kinds.h"
#include "dsl/names.h"
#include "support/hash.h"

namespace ucut::dsl {

namespace {

int prec(const Expr& e) {
  if (e.kind == Expr::Kind::binary) return (e.op == BinOp::add || e.op == BinOp::sub) ? 1 : 2;
  return 3;
}

std::string expr_str(const Expr& e);

std::string wrap(const Expr& e, int min_prec) {
  std::string s = expr_str(e);
  return prec(e) < min_prec ? "(" + s + ")" : s;
}

std::string expr_str(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::acc: return "acc";
    case Expr::Kind::constant: return dsl_number_str(e.value);
    case Expr::Kind::scalar:
    case Expr::Kind::local: return e.name;
    case Expr::Kind::load:
      return e.name + (e.mode == LoadMode::row ? "[row]" : e.mode == LoadMode::col ? "[col]" : "");
    case Expr::Kind::index: return e.mode == LoadMode::row ? "row" : "col";
    case Expr::Kind::binary: {
      int p = prec(e);
      const char* op = e.op == BinOp::add ? " + " : e.op == BinOp::sub ? " - " : e.op == BinOp::mul ? " * " : " / ";
      return wrap(*e.args[0], p) + op + wrap(*e.args[1], p + 1);
    }
    case Expr::Kind::unary:
    case Expr::Kind::call: {
      std::string s = std::string(dsl_function(e.fn).name) + "(";
      for (size_t i = 0; i < e.args.size(); ++i) s += (i ? ", " : "") + expr_str(*e.args[i]);
      for (double v : e.params) s += ", " + dsl_number_str(v);
      return s + ")";
    }
  }
  return "?";
}

}  // namespace

void dsl_print_block(std::string& out, const char* keyword, const Epilogue& epi) {
  out += "  ";
  out += keyword;
  out += " {\n";
  for (const auto& st : epi.stmts) {
    out += "    ";
    switch (st.kind) {
      case EpilogueStmt::Kind::let: out += "let " + st.name + " = " + expr_str(*st.value); break;
      case EpilogueStmt::Kind::store: out += st.name + " = " + expr_str(*st.value); break;
      case EpilogueStmt::Kind::reduce: {
        const char* name = "rowsum";
        for (const auto& r : dsl_reductions())
          if (r.op == st.reduce_op && r.axis == st.reduce_axis) name = r.name;
        out += st.name + " = " + name + "(" + expr_str(*st.value) + ")";
        break;
      }
    }
    out += "\n";
  }
  out += "  }\n";
}

namespace {

std::string opt_int(const std::optional<int>& v) { return v ? std::to_string(*v) : "auto"; }

}  // namespace

void dsl_print_gemm_knobs(std::string& out, const GemmKnobs& k) {
  out += "  precision " + std::string(dsl_precision_str(k.precision)) + "\n";
  out += "  tile " + (k.tile ? std::to_string(k.tile->m) + "x" + std::to_string(k.tile->n) + "x" + std::to_string(k.tile->k) : "auto") + "\n";
  out += "  cluster " + (k.cluster ? std::to_string(k.cluster->m) + "x" + std::to_string(k.cluster->n) : "auto") + "\n";
  out += "  stages " + opt_int(k.stages) + "\n";
  out += "  schedule " + std::string(dsl_schedule_str(k.schedule)) + "\n";
  out += "  scheduler " + std::string(dsl_scheduler_str(k.scheduler)) + "\n";
  out += "  split_k " + opt_int(k.split_k) + "\n";
  out += "  raster " + std::string(dsl_raster_str(k.raster)) + "\n";
  out += "  swizzle " + opt_int(k.swizzle) + "\n";
  out += "  align " + opt_int(k.align) + "\n";
  out += "  math " + std::string(dsl_math_str(k.math)) + "\n";
}

void dsl_print_simt_knobs(std::string& out, const SimtKnobs& k, const std::string& kind) {
  for (const auto& name : dsl_stage_knobs(kind)) {
    if (name == "order") {
      out += "  order " + std::string(dsl_scan_order_str(k.order)) + "\n";
      continue;
    }
    const std::optional<int>& v = name == "threads" ? k.threads : name == "rows_per_block" ? k.rows_per_block
                                  : name == "vector_width" ? k.vector_width : name == "items_per_thread" ? k.items_per_thread
                                  : name == "cluster" ? k.cluster : k.passes;
    out += "  " + name + " " + opt_int(v) + "\n";
  }
}

std::string dsl_operand_str(const Operand& o) { return o.tensor + (o.transposed ? ".T" : ""); }

std::string dsl_outputs_str(const Stage& s, size_t n) {
  if (n == 1) return s.outputs[0];
  std::string r = "(";
  for (size_t i = 0; i < n; ++i) r += (i ? ", " : "") + s.outputs[i];
  return r + ")";
}

namespace {

void print_stage(std::string& out, const Stage& s) {
  out += "stage ";
  dsl_kind(dsl_stage_kind_of(s)).print(out, s);
  out += "}\n";
}

}  // namespace

std::string dsl_print(const Program& p) {
  std::string out = "ucut " + std::to_string(p.version) + "\nname " + p.name + "\n\n";
  for (const auto& t : p.tensors) {
    out += std::string(dsl_role_str(t.role)) + " " + t.name + " : " + dsl_dtype_str(t.dtype) + "[";
    for (size_t i = 0; i < t.shape.size(); ++i) out += (i ? ", " : "") + std::to_string(t.shape[i]);
    out += "]";
    if (t.role == TensorRole::param) out += " = \"" + t.binding + "\"";
    if (t.role == TensorRole::view) {
      out += " = " + t.view_of + " strides [";
      for (size_t i = 0; i < t.view_strides.size(); ++i) out += (i ? ", " : "") + std::to_string(t.view_strides[i]);
      out += "] offset " + std::to_string(t.view_offset);
    }
    out += "\n";
  }
  for (const auto& s : p.scalars) out += "scalar " + s.name + " = " + dsl_number_str(s.default_value) + "\n";
  for (const auto& s : p.stages) {
    out += "\n";
    print_stage(out, s);
  }
  return out;
}

std::string dsl_hash(const Program& p) { return sha256_hex(dsl_print(p)); }

std::string dsl_function_table_markdown() {
  std::string out = "| function | operands | parameters (defaults) | formula |\n|---|---|---|---|\n";
  for (const auto& f : dsl_functions()) {
    std::string params = f.nparams == 0 ? "-" : std::to_string(f.nparams) + (*f.defaults ? std::string(" (") + f.defaults + ")" : " (required)");
    std::string formula = f.formula;
    std::string esc;
    for (char c : formula) esc += c == '|' ? std::string("\\|") : std::string(1, c);
    out += std::string("| `") + f.name + "` | " + std::to_string(f.arity) + " | " + params + " | `" + esc + "` |\n";
  }
  return out;
}

}  // namespace ucut::dsl
