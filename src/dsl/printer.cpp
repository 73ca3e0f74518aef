// The canonical printer (what `ucutlass fmt` writes), the program hash and the generated
// function table. Canonical text: declarations in order, scalars after them, every knob written
// (auto where unset), defaults of function parameters and stage settings filled in, one
// statement per line, parentheses only where precedence needs them.
#include <algorithm>

#include "dsl/dsl.h"
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

void print_block(std::string& out, const char* keyword, const Epilogue& epi) {
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

std::string opt_int(const std::optional<int>& v) { return v ? std::to_string(*v) : "auto"; }

void print_gemm_knobs(std::string& out, const GemmKnobs& k) {
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

void print_simt_knobs(std::string& out, const SimtKnobs& k, const std::string& kind) {
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

std::string operand_str(const Operand& o) { return o.tensor + (o.transposed ? ".T" : ""); }

std::string outputs_str(const Stage& s, size_t n) {
  if (n == 1) return s.outputs[0];
  std::string r = "(";
  for (size_t i = 0; i < n; ++i) r += (i ? ", " : "") + s.outputs[i];
  return r + ")";
}

void print_stage(std::string& out, const Stage& s) {
  out += "stage ";
  if (const auto* g = std::get_if<GemmStage>(&s.body)) {
    out += s.outputs[0] + " = gemm(" + operand_str(g->a) + ", " + operand_str(g->b) + ") {\n";
    print_gemm_knobs(out, g->knobs);
    print_block(out, "epilogue", g->epilogue);
  } else if (const auto* gg = std::get_if<GroupedGemmStage>(&s.body)) {
    out += outputs_str(s, gg->a.size()) + " = grouped_gemm(";
    for (size_t i = 0; i < gg->a.size(); ++i)
      out += std::string(i ? ", " : "") + "(" + operand_str(gg->a[i]) + ", " + operand_str(gg->b[i]) + ")";
    out += ") {\n";
    print_gemm_knobs(out, gg->knobs);
    print_block(out, "epilogue", gg->epilogue);
  } else if (const auto* r = std::get_if<RowwiseStage>(&s.body)) {
    out += s.outputs[0] + " = rowwise " + r->op + "(" + r->input;
    for (const auto& o : r->operands) out += ", " + o;
    if (!r->weight.empty()) out += ", weight=" + r->weight;
    if (!r->bias.empty()) out += ", bias=" + r->bias;
    for (const auto& [k, v] : r->attrs) out += ", " + k + "=" + dsl_number_str(v);
    out += ") {\n";
    print_simt_knobs(out, r->knobs, "rowwise");
    if (!r->prologue.stmts.empty()) print_block(out, "prologue", r->prologue);
    if (!r->epilogue.stmts.empty()) print_block(out, "epilogue", r->epilogue);
  } else if (const auto* d = std::get_if<ReduceStage>(&s.body)) {
    out += (s.outputs.size() > 1 ? outputs_str(s, s.outputs.size()) : s.outputs[0]) + " = reduce " + d->op + "(";
    for (size_t i = 0; i < d->inputs.size(); ++i) out += (i ? ", " : "") + d->inputs[i];
    if (d->reduction.empty() && !d->dims.empty()) {  // a rank-0 input has no dims to list
      out += ", dims=[";
      for (size_t i = 0; i < d->dims.size(); ++i) out += (i ? ", " : "") + std::to_string(d->dims[i]);
      out += "]";
    } else if (!d->reduction.empty()) {
      out += ", reduction=" + d->reduction;
    }
    for (const auto& [k, v] : d->attrs) out += ", " + k + "=" + dsl_number_str(v);
    out += ") {\n";
    print_simt_knobs(out, d->knobs, "reduce");
    if (!d->prologue.stmts.empty()) print_block(out, "prologue", d->prologue);
    if (!d->epilogue.stmts.empty()) print_block(out, "epilogue", d->epilogue);  // arg ops: none
  } else if (const auto* c = std::get_if<ScanStage>(&s.body)) {
    out += s.outputs[0] + " = scan " + c->op + "(" + c->input + ", dim=" + std::to_string(c->dim) +
           ", exclusive=" + (c->exclusive ? "true" : "false") + ", reverse=" + (c->reverse ? "true" : "false");
    if (!c->mask.empty()) out += ", mask=" + c->mask;
    out += ") {\n";
    print_simt_knobs(out, c->knobs, "scan");
  } else if (const auto* at = std::get_if<AttentionStage>(&s.body)) {
    out += s.outputs[0] + " = attention(" + at->q + ", " + at->k + ", " + at->v +
           ", causal=" + (at->causal ? "true" : "false") + ", scale=" + dsl_number_str(at->scale) + ") {\n";
    print_simt_knobs(out, at->knobs, "attention");
  } else if (const auto* e = std::get_if<ElementwiseStage>(&s.body)) {
    out += s.outputs[0] + " = elementwise {\n";
    // an internal stage of the f32x3s expansion; never parsed back (ElementwiseStage::transpose)
    if (e->transpose) out += "  # transposed: reads its inputs' last two dims swapped\n";
    print_simt_knobs(out, e->knobs, "elementwise");
    print_block(out, "body", e->body);
  } else if (const auto* t = std::get_if<TorchStage>(&s.body)) {
    out += outputs_str(s, s.outputs.size()) + " = torch {\n";
    for (const auto& op : t->ops) {
      out += "  ";
      if (!op.output_is_local.empty() && op.output_is_local[0]) out += "let ";
      if (op.outputs.size() == 1) {
        out += op.outputs[0];
      } else {
        out += "(";
        for (size_t i = 0; i < op.outputs.size(); ++i) out += (i ? ", " : "") + op.outputs[i];
        out += ")";
      }
      out += " = " + op.op + "(";
      bool first = true;
      for (const auto& in : op.inputs) {
        out += (first ? "" : ", ") + (in.absent ? std::string("none") : in.tensor.empty() ? dsl_number_str(in.number) : in.tensor);
        first = false;
      }
      for (const auto& [k, v] : op.attrs) {
        out += (first ? "" : ", ") + k + "=";
        first = false;
        if (v.kind == TorchOp::Attr::Kind::number) {
          out += dsl_number_str(v.number);
        } else if (v.kind == TorchOp::Attr::Kind::word) {
          out += v.word;
        } else {
          out += "[";
          for (size_t i = 0; i < v.list.size(); ++i) out += (i ? ", " : "") + std::to_string(v.list[i]);
          out += "]";
        }
      }
      out += ")\n";
    }
  }
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
