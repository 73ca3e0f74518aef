// sol_problem_cost: FLOPs per class and minimum bytes of a Problem.
#include "sol/cost.h"

#include <fmt/format.h>

#include <initializer_list>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "support/checked.h"

namespace ucut::sol {

namespace {

using problem::Op;
using problem::Problem;
using problem::Tensor;
using problem::TensorKind;

// Ops that only reinterpret strides: zero bytes when costed alone (PyTorch makes a view).
const std::unordered_set<std::string> kViewOps = {
    "view", "reshape", "unsqueeze", "squeeze", "expand", "flatten", "t", "transpose",
    "permute", "select", "slice", "dropout", "alias", "detach", "unflatten", "expand_as"};

const std::set<std::string> kMatmulOps = {"matmul", "mm", "bmm", "linear", "addmm", "baddbmm"};

bool is_conv(const std::string& op) { return op == "conv1d" || op == "conv2d" || op == "conv3d"; }
bool is_conv_t(const std::string& op) {
  return op == "conv_transpose1d" || op == "conv_transpose2d" || op == "conv_transpose3d";
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

Error op_error(const Op& op, const std::string& what) {
  return make_error(ErrorCode::invalid_input, fmt::format("ops[{}] ({}): {}", op.id, op.op, what),
                    "the problem's shapes are inconsistent; re-extract it");
}

// The tensor operands of an op, in order (scalars skipped).
std::vector<const Tensor*> tensor_inputs(const Problem& p, const Op& op) {
  std::vector<const Tensor*> out;
  for (const auto& in : op.inputs)
    if (in.is_tensor()) out.push_back(p.find_tensor(in.tensor));
  return out;
}

// The op's FLOPs when they fit in 64 bits; shapes far beyond any GPU give an error, not a wrapped
// count.
Result<int64_t> fitting(const Op& op, std::optional<int64_t> flops) {
  if (flops) return *flops;
  return make_error(ErrorCode::invalid_input,
                    fmt::format("ops[{}] ({}): its FLOP count does not fit in 64 bits", op.id, op.op),
                    "the problem's sizes are far beyond any GPU; check the shapes get_inputs() makes");
}

// sum += v, false when the sum no longer fits.
bool add_to(int64_t& sum, int64_t v) {
  auto r = checked_add(sum, v);
  if (r) sum = *r;
  return r.has_value();
}

// a * b * c ... checked.
std::optional<int64_t> mul(std::initializer_list<std::optional<int64_t>> factors) {
  int64_t n = 1;
  for (const auto& f : factors) {
    if (!f) return std::nullopt;
    auto next = checked_mul(n, *f);
    if (!next) return std::nullopt;
    n = *next;
  }
  return n;
}

}  // namespace

const char* cost_class_name(CostClass c) {
  switch (c) {
    case CostClass::tensor_f32: return "tensor_f32";
    case CostClass::tensor_16: return "tensor_16";
    case CostClass::simt: return "simt";
  }
  return "?";
}

Result<int64_t> sol_tensor_op_flops(const Problem& p, const Op& op) {
  bool matmul = kMatmulOps.count(op.op) > 0;
  bool family = matmul || is_conv(op.op) || is_conv_t(op.op) || op.op == "sdpa";
  if (!family) return int64_t(-1);
  auto ins = tensor_inputs(p, op);
  if (op.outputs.empty()) return op_error(op, "has no output");
  const Tensor* out = p.find_tensor(op.outputs[0]);
  size_t need = (op.op == "addmm" || op.op == "baddbmm" || op.op == "sdpa") ? 3 : 2;
  if (ins.size() < need) return op_error(op, fmt::format("expects at least {} tensor operands, has {}", need, ins.size()));

  if (matmul) {
    bool with_c = op.op == "addmm" || op.op == "baddbmm";
    const Tensor* a = ins[with_c ? 1 : 0];
    const Tensor* b = ins[with_c ? 2 : 1];
    if (a->shape.empty() || b->shape.empty()) return op_error(op, "matmul operands must have rank >= 1");
    int64_t k = a->shape.back();
    int64_t kb = 0;
    if (op.op == "linear") {
      kb = b->shape.back();  // weight [N, K]
    } else {
      kb = b->shape.size() == 1 ? b->shape[0] : b->shape[b->shape.size() - 2];
    }
    if (k != kb)
      return op_error(op, fmt::format("operands disagree on K: '{}' {} has K={}, '{}' {} has K={}", a->name,
                                      shape_str(a->shape), k, b->name, shape_str(b->shape), kb));
    std::optional<int64_t> flops = mul({2, k, out->numel()});
    if (flops && op.op == "linear" && ins.size() >= 3) flops = checked_add(*flops, out->numel());  // bias add
    if (flops && with_c) flops = checked_add(*flops, 2 * out->numel());                          // alpha·AB + beta·C
    return fitting(op, flops);
  }
  if (is_conv(op.op)) {
    // w: [C_out, C_in/groups, k...]: each output element is a dot product of C_in/groups·prod(k).
    if (ins[1]->shape.size() < 3) return op_error(op, "convolution weight must have rank >= 3");
    return fitting(op, mul({2, out->numel(), checked_product(ins[1]->shape, 1)}));
  }
  if (is_conv_t(op.op)) {
    // w: [C_in, C_out/groups, k...]: each input element scatters to C_out/groups·prod(k) outputs.
    if (ins[1]->shape.size() < 3) return op_error(op, "transposed-convolution weight must have rank >= 3");
    return fitting(op, mul({2, ins[0]->numel(), checked_product(ins[1]->shape, 1)}));
  }
  // sdpa: q [.., Lq, Dqk], k [.., Lk, Dqk], v [.., Lk, Dv]: QK^T then PV.
  const Tensor *q = ins[0], *k = ins[1], *v = ins[2];
  if (q->shape.size() < 2 || k->shape.size() < 2 || v->shape.size() < 2)
    return op_error(op, "sdpa operands must have rank >= 2");
  if (q->shape.back() != k->shape.back())
    return op_error(op, fmt::format("q {} and k {} disagree on the head dimension", shape_str(q->shape),
                                    shape_str(k->shape)));
  int64_t dqk = q->shape.back(), lk = k->shape[k->shape.size() - 2], dv = v->shape.back();
  int64_t rows = dqk ? q->numel() / dqk : 0;  // batch·heads·Lq
  auto flops = mul({2, rows, lk, checked_add(dqk, dv)});
  auto causal = op.attrs.find("is_causal");
  if (flops && causal != op.attrs.end() && causal->is_boolean() && causal->get<bool>()) *flops /= 2;
  return fitting(op, flops);
}

// True when `name` holds f16/bf16 values widened to fp32: produced (through views) by a `to`
// conversion from a 16-bit float tensor. A matmul of such operands is exact on the 16-bit tensor
// cores (fp16/bf16 products are exact in fp32), so its bound is the 16-bit rate.
static bool widened_from_16bit(const Problem& p, const std::unordered_map<std::string, const Op*>& producer,
                        std::string name) {
  for (int hops = 0; hops < 64; ++hops) {
    const Tensor* t = p.find_tensor(name);
    if (t && problem::dtype_is_16bit_float(t->dtype)) return hops > 0;
    auto it = producer.find(name);
    if (it == producer.end()) return false;
    const Op& op = *it->second;
    if (op.op != "to" && !kViewOps.count(op.op)) return false;
    auto ins = tensor_inputs(p, op);
    if (ins.empty()) return false;
    name = ins[0]->name;
  }
  return false;
}

Result<ProblemCost> sol_problem_cost(const Problem& p) {
  std::unordered_map<std::string, const Op*> producer;
  for (const Op& op : p.ops)
    for (const auto& o : op.outputs) producer[o] = &op;
  ProblemCost cost;
  cost.name = p.name;
  std::unordered_set<std::string> read;  // tensors some op reads
  bool fits = true;                      // every sum below stayed inside 64 bits
  for (const Op& op : p.ops) {
    OpCost oc;
    oc.id = op.id;
    oc.op = op.op;
    oc.line = op.line;
    oc.flops = op.flops;
    auto recomputed = sol_tensor_op_flops(p, op);
    if (!recomputed) return recomputed.error();
    bool tensor = op.flop_class == problem::FlopClass::tensor;
    if (*recomputed >= 0) {
      tensor = true;
      if (*recomputed != op.flops) {
        cost.notes.push_back(fmt::format("ops[{}] ({}): the IR says {} FLOPs, the shapes give {}; using {}", op.id,
                                         op.op, op.flops, *recomputed, *recomputed));
        oc.flops = *recomputed;
      }
    }
    auto ins = tensor_inputs(p, op);
    if (tensor) {
      bool half = !ins.empty() && problem::dtype_is_16bit_float(ins[0]->dtype);
      if (!half && ins.size() >= 2 && widened_from_16bit(p, producer, ins[0]->name) &&
          widened_from_16bit(p, producer, ins[1]->name)) {
        half = true;
        cost.notes.push_back(fmt::format("ops[{}] ({}): its operands are f16/bf16 values widened to fp32; "
                                         "bounded at the 16-bit tensor rate (their products are exact)",
                                         op.id, op.op));
      }
      oc.cls = half ? CostClass::tensor_16 : CostClass::tensor_f32;
    }
    std::unordered_set<std::string> seen;
    if (!kViewOps.count(op.op)) {
      for (const Tensor* t : ins)
        if (seen.insert(t->name).second && t->kind != TensorKind::constant) fits = fits && add_to(oc.bytes, t->bytes());
      for (const auto& o : op.outputs) fits = fits && add_to(oc.bytes, p.find_tensor(o)->bytes());
    }
    for (const Tensor* t : ins) read.insert(t->name);
    switch (oc.cls) {
      case CostClass::tensor_f32: fits = fits && add_to(cost.flops_tensor_f32, oc.flops); break;
      case CostClass::tensor_16: fits = fits && add_to(cost.flops_tensor_16, oc.flops); break;
      case CostClass::simt: fits = fits && add_to(cost.flops_simt, oc.flops); break;
    }
    cost.ops.push_back(std::move(oc));
  }
  // Compulsory traffic: each input/parameter/buffer some op reads, once; each output written once.
  // An input returned unchanged is only read. Intermediates and constants cost nothing.
  std::unordered_set<std::string> counted;
  for (const Tensor& t : p.tensors) {
    bool source = t.kind == TensorKind::input || t.kind == TensorKind::parameter || t.kind == TensorKind::buffer;
    if (source || t.kind == TensorKind::output) fits = fits && add_to(cost.tensor_bytes, t.bytes());
    if (source && read.count(t.name) && counted.insert(t.name).second) fits = fits && add_to(cost.min_bytes, t.bytes());
  }
  for (const auto& name : p.outputs) {
    const Tensor* t = p.find_tensor(name);
    if (t->kind == TensorKind::output && counted.insert(t->name).second) fits = fits && add_to(cost.min_bytes, t->bytes());
  }
  fits = fits && checked_add(cost.flops_tensor_f32, cost.flops_tensor_16) &&
         checked_add(cost.flops_tensor(), cost.flops_simt);
  if (!fits)
    return make_error(ErrorCode::invalid_input, p.name + ": the problem's FLOPs or bytes do not fit in 64 bits",
                      "its sizes are far beyond any GPU; check the shapes get_inputs() makes");
  return cost;
}

}  // namespace ucut::sol
