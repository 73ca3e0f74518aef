// The checker of torch stages (program.h TorchStage): each statement calls an operation of
// dsl/torch_ops.def with tensors the program declares or the stage's earlier locals, keyword
// arguments are numbers, integer lists or words, and every stage output is assigned exactly once.
// Shapes are the host's to check when it runs the stage (an operation's result shape is PyTorch's).
// Golden tests: tests/golden/dsl/ok/torch_stage.ucut, tests/golden/dsl/errors/torch_*.ucut.
#include <set>

#include "dsl/checker.h"
#include "dsl/names.h"

namespace ucut::dsl::detail {

namespace {

std::vector<std::string> torch_op_names() {
  std::vector<std::string> names;
  for (const auto& o : dsl_torch_ops()) names.emplace_back(o.name);
  return names;
}

std::string count_str(int lo, int hi, const char* what) {
  std::string n = lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
  return n + " " + what + (lo == hi && lo == 1 ? "" : "s");
}

}  // namespace

bool Checker::check_torch(const AstStage& s, Stage& st, std::vector<TensorUse>& reads) {
  if (s.op || !s.args.empty() || !s.knobs.empty() || !s.blocks.empty()) {
    Span at = s.op ? s.op->span : !s.args.empty() ? s.args[0].span : !s.knobs.empty() ? s.knobs[0].name.span
                                                                                       : s.blocks[0].keyword.span;
    error(at, "a torch stage is a block of statements, without an operation name, arguments, knobs or blocks",
          "write 'stage y = torch { y = masked_fill(s, m, -inf) }'");
    return false;
  }
  if (s.torch_stmts.empty()) {
    error(s.span, "the torch stage has no statements", "write 'stage y = torch { y = op(x, ...) }'");
    return false;
  }
  TorchStage t;
  std::set<std::string> locals, assigned, read_set;
  const std::set<std::string> outputs(st.outputs.begin(), st.outputs.end());
  bool ok = true;
  for (const auto& stmt : s.torch_stmts) {
    const TorchOpInfo* info = dsl_torch_op(stmt.op.text);
    if (!info) {
      std::string g = diag_closest(stmt.op.text, torch_op_names());
      error(stmt.op.span, "unknown torch operation '" + stmt.op.text + "'",
            g.empty() ? "torch stages run the Problem IR's operations (docs/problem-ir.md)" : "did you mean '" + g + "'?");
      ok = false;
      continue;
    }
    TorchOp op;
    op.op = stmt.op.text;
    bool keywords = false;
    for (const auto& a : stmt.args) {
      if (a.key) {
        keywords = true;
        TorchOp::Attr attr;
        if (a.kind == AstArg::Kind::number) {
          attr.number = a.number;
        } else if (a.kind == AstArg::Kind::list) {
          attr.kind = TorchOp::Attr::Kind::list;
          attr.list = a.list;
        } else if (a.kind == AstArg::Kind::name && !a.transposed) {
          attr.kind = TorchOp::Attr::Kind::word;
          attr.word = a.name.text;
        } else {
          error(a.span, "the argument '" + a.key->text + "' takes a number, a list of integers or a word",
                "write for example dim=1, dims=[0, 2] or approximate=tanh");
          ok = false;
          continue;
        }
        if (!op.attrs.emplace(a.key->text, attr).second) {
          error(a.key->span, "the argument '" + a.key->text + "' is given twice", "give each argument once");
          ok = false;
        }
        continue;
      }
      if (keywords) {
        error(a.span, "a positional operand after keyword arguments", "write the operands first, then key=value");
        ok = false;
        continue;
      }
      TorchOp::Operand o;
      if (a.kind == AstArg::Kind::number) {
        o.number = a.number;
      } else if (a.kind == AstArg::Kind::name && !a.transposed && a.name.text == "none") {
        o.absent = true;
      } else if (a.kind == AstArg::Kind::name && !a.transposed) {
        o.tensor = a.name.text;
        if (!locals.count(o.tensor)) {
          const Tensor* tt = need_tensor(a.name, "torch operand");
          if (!tt) {
            ok = false;
            continue;
          }
          if (read_set.insert(o.tensor).second) t.reads.push_back(o.tensor);
          reads.push_back({o.tensor, a.name.span});
        }
      } else {
        error(a.span, "a torch operand is a tensor name or a number",
              a.transposed ? "write transpose(x, dim0=0, dim1=1) instead of '.T'" : "write the tensor's name");
        ok = false;
        continue;
      }
      op.inputs.push_back(o);
    }
    const int n_in = static_cast<int>(op.inputs.size());
    if (n_in < info->min_inputs || n_in > info->max_inputs) {
      error(stmt.op.span, "'" + op.op + "' takes " + count_str(info->min_inputs, info->max_inputs, "operand") +
                              ", found " + std::to_string(n_in),
            "see the operation's row in docs/problem-ir.md");
      ok = false;
    }
    const int n_out = static_cast<int>(stmt.targets.size());
    if (n_out < info->min_outputs || n_out > info->max_outputs) {
      error(stmt.targets[0].span, "'" + op.op + "' gives " + count_str(info->min_outputs, info->max_outputs, "result") +
                                      ", the statement names " + std::to_string(n_out),
            "name one target per result");
      ok = false;
    }
    for (const auto& tg : stmt.targets) {
      if (stmt.is_let) {
        if (tensor(tg.text) || locals.count(tg.text)) {
          error(tg.span, "'" + tg.text + "' is already " + (locals.count(tg.text) ? "a local of this stage" : "a declared tensor"),
                "choose a new name for the local");
          ok = false;
          continue;
        }
        locals.insert(tg.text);
      } else {
        if (!outputs.count(tg.text)) {
          error(tg.span, "'" + tg.text + "' is not an output of this stage",
                "assign the stage's outputs, or write 'let " + tg.text + " = ...' for a local value");
          ok = false;
          continue;
        }
        if (!assigned.insert(tg.text).second) {
          error(tg.span, "'" + tg.text + "' is assigned twice", "assign each output once");
          ok = false;
          continue;
        }
      }
      op.outputs.push_back(tg.text);
      op.output_is_local.push_back(stmt.is_let);
    }
    t.ops.push_back(std::move(op));
  }
  if (!ok) return false;
  for (const auto& o : s.outputs)
    if (!assigned.count(o.text)) {
      error(o.span, "the torch stage never assigns its output '" + o.text + "'", "add '" + o.text + " = op(...)'");
      return false;
    }
  st.body = std::move(t);
  return true;
}

}  // namespace ucut::dsl::detail
