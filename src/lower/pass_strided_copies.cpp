// pass_strided_copies: views that move data (split/chunk, slice, select, permute/transpose other
// than of the last two dims, and the reshapes, contiguous/clone and expands of those) become DSL
// views (LowerState::strided) of the stored tensor they read, composed along the chain, and one
// `strided_copy` op (an elementwise copy, `y = v`) where a value of the chain is needed stored: read
// by an op that is no such view, returned, read by a reshape its strides cannot express, or read
// transposed (last two dims) by GEMMs only, which read the stored tensor as `X.T` instead. The
// chain's other ops die. minGPT's `c_attn(x).split(C, 2)` then `view(B, T, H, D).transpose(1, 2)`
// is one copy per head tensor, reading the projection at strides, where it was two torch stages.
// An elementwise op reading a copied value then joins the copy's stage (pass_fuse_epilogue), so
// the view is read where it is used. Runs after pass_expand_ops (whose triangle fold kills the mask
// slices first) and before pass_check_ops. Golden tests: tests/golden/lower/head_split_permute.json,
// einsum_output_permuted.json, masked_relu_attention.json.
#include <algorithm>
#include <optional>
#include <set>

#include "lower/lower_expr.h"
#include "lower/passes.h"

namespace ucut::lower {

namespace {

bool is_hard(const std::string& n) {
  return n == "split" || n == "chunk" || n == "slice" || n == "select" || n == "narrow";
}

bool is_permute(const std::string& n) { return n == "permute" || n == "transpose" || n == "t"; }

class StridedCopies {
 public:
  explicit StridedCopies(LowerState& s) : s_(s) {}

  Status run() {
    // 1. the views of the chains, in run order
    for (const auto& op : s_.ops) {
      const size_t i = static_cast<size_t>(op.id);
      if (s_.dead[i] || s_.cls[i] == OpClass::torch || !moves(op) || op.inputs.empty() || !op.inputs[0].is_tensor())
        continue;
      const std::string& in = op.inputs[0].tensor;
      // a chain starts at a data-moving op (pass_views left those without an alias); view ops
      // continue it, except a swap of the last two dims that GEMMs read as `X.T`
      const bool unaliased = !s_.views.count(op.outputs.at(0));
      const bool starts = is_hard(op.op) || (unaliased && is_permute(op.op)) ||
                          (unaliased && op_class(op) == OpClass::view && s_.resolve(in).transposed);
      if (!starts && !virt_.count(in)) continue;
      if (gemm_transpose(op)) {
        if (virt_.count(in)) need_.insert(in);
        continue;
      }
      auto src = strided_of(in);
      bool all = src.has_value();
      for (size_t k = 0; all && k < op.outputs.size(); ++k) {
        auto o = apply(op, *src, k);
        if (!o) {
          all = false;
          break;
        }
        virt_[op.outputs[k]] = *o;
        writer_[op.outputs[k]] = op.id;
      }
      if (all) continue;
      for (const auto& o : op.outputs) {
        virt_.erase(o);
        writer_.erase(o);
      }
      if (!virt_.count(in)) continue;  // not a chain value: pass_check_ops names the op
      need_.insert(in);                // the op reads its input stored, a reshape as an alias of it
      if (op_class(op) == OpClass::view && !is_permute(op.op) && unaliased && op.outputs.size() == 1 &&
          s_.need(op.outputs[0]).numel() == s_.need(in).numel())
      {
        if (auto a = s_.views.find(in); a != s_.views.end() && a->second.base == op.outputs[0])
          s_.views.erase(a);  // pass_views' `return y.view(..)` alias, the other way round
        s_.views[op.outputs[0]] = View{in, false};
      }
    }
    if (virt_.empty()) return ok_status();
    // 2. where a value must be stored
    for (const auto& [t, sv] : virt_) {
      if (s_.is_output(t) || need_.count(t)) {
        need_.insert(t);
        continue;
      }
      for (const auto& op : s_.ops) {
        if (s_.dead[static_cast<size_t>(op.id)]) continue;
        bool reads = false;
        for (const auto& in : op.inputs) reads = reads || (in.is_tensor() && s_.reads_through(in.tensor, t));
        if (!reads) continue;
        if (virt_.count(op.outputs.at(0)) && writer_.at(op.outputs.at(0)) == op.id) {
          // a chain op reading t; a swap of the last two dims that only GEMMs read stays their `X.T`
          if (gemm_transpose(op)) need_.insert(t);
          continue;
        }
        need_.insert(t);
      }
    }
    // 3. a copy op for each, the chains' other ops dead
    std::map<int, std::vector<problem::Op>> replace;  // op id -> its copies
    for (const auto& t : need_) {
      const Strided& sv = virt_.at(t);
      if (sv.shape.size() > 6) return s_.unsupported(writer_.at(t), "a view of more than 6 dimensions");
      const std::string v = s_.add_tensor(t + "_view", s_.need(t).dtype, sv.shape);
      s_.strided[v] = sv;
      s_.views[v] = View{sv.base, false};
      s_.views.erase(t);  // stored now
      problem::Op c;
      c.op = "strided_copy";
      c.inputs = {problem::Operand{v, std::nullopt}};
      c.outputs = {t};
      c.line = s_.ops[static_cast<size_t>(writer_.at(t))].line;
      replace[writer_.at(t)].push_back(std::move(c));
    }
    for (auto it = replace.rbegin(); it != replace.rend(); ++it) {
      const std::string label = s_.op_label(it->first);
      s_.replace_op(it->first, std::move(it->second));
      s_.notes.push_back(label + ": moves data; read through a view (strides) by one elementwise copy");
    }
    for (const auto& [t, sv] : virt_)
      if (!need_.count(t)) s_.views.erase(t);
    s_.mark_dead_ops(false);
    reshaped_reads();
    return ok_status();
  }

  // An elementwise op reading a reshape of a stored tensor in a shape the tensor is not declared
  // with (Mamba2's `x[..., :, None] - x[..., None, :]`), or a transpose of its last two dims, reads
  // a DSL view of it in that shape instead, broadcast as the op sees it (pass_check_ops refused
  // both before: only GEMM operands took reshapes and transposes).
  void reshaped_reads() {
    for (auto& op : s_.ops) {
      const size_t i = static_cast<size_t>(op.id);
      if (s_.dead[i] || s_.cls[i] != OpClass::elementwise || op.op == "strided_copy") continue;
      for (auto& in : op.inputs) {
        if (!in.is_tensor() || s_.strided.count(in.tensor)) continue;
        const View v = s_.resolve(in.tensor);
        if (v.base == in.tensor) continue;
        const std::vector<int64_t> seen = s_.need(in.tensor).shape;
        const problem::Tensor& base = s_.need(v.base);
        if (seen.empty() || seen.size() > 6 || shape_numel(seen) != base.numel()) continue;
        if (!v.transposed && (seen == base.shape || squeeze_leading(seen) == squeeze_leading(base.shape) ||
                              lower_decl_shape(s_, v.base) == seen))
          continue;
        auto st = strided_of(in.tensor);  // a transposed alias: its last two strides swapped
        if (!st) continue;
        const std::string name = s_.add_tensor(in.tensor + "_view", base.dtype, seen);
        s_.strided[name] = *st;
        s_.views[name] = View{v.base, false};
        in.tensor = name;
      }
    }
  }

 private:
  LowerState& s_;
  std::map<std::string, Strided> virt_;  // tensors of the chains
  std::map<std::string, int> writer_;    // their ops
  std::set<std::string> need_;           // stored by a copy

  static bool moves(const problem::Op& op) {
    return is_hard(op.op) || op_class(op) == OpClass::view;
  }

  // A last-two swap whose output only GEMMs read (their `X.T`).
  bool gemm_transpose(const problem::Op& op) const {
    if (!is_permute(op.op)) return false;
    const int rank = static_cast<int>(s_.need(op.inputs[0].tensor).shape.size());
    auto p = op_permutation(op, rank);
    if (!p || !permutation_swaps_last_two(*p)) return false;
    const auto readers = s_.consumers(op.outputs.at(0));
    if (readers.empty()) return false;
    for (int r : readers)
      if (s_.cls[static_cast<size_t>(r)] != OpClass::gemm) return false;
    return true;
  }

  // The strides of `name`: a chain value, or a stored tensor of rank 1 or more.
  std::optional<Strided> strided_of(const std::string& name) const {
    if (auto it = virt_.find(name); it != virt_.end()) return it->second;
    if (s_.need(name).shape.empty()) return std::nullopt;
    return lower_strided_of(s_, name);
  }

  // Output k of `op` applied to `in`, or nullopt.
  std::optional<Strided> apply(const problem::Op& op, const Strided& in, size_t k) const {
    Strided o = in;
    const int rank = static_cast<int>(in.shape.size());
    const std::vector<int64_t>& want = s_.need(op.outputs.at(k)).shape;
    auto dim_attr = [&](const char* key, int dflt) {
      int d = static_cast<int>(attr_number(op, key, dflt));
      return d < 0 ? d + rank : d;
    };
    const std::string& n = op.op;
    if (n == "split" || n == "chunk") {
      const int d = dim_attr("dim", 0);
      if (d < 0 || d >= rank || !op.attrs.contains("sizes") || !op.attrs.at("sizes").is_array() ||
          op.attrs.at("sizes").size() != op.outputs.size())
        return std::nullopt;
      int64_t start = 0;
      for (size_t j = 0; j < k; ++j) start += op.attrs.at("sizes")[j].get<int64_t>();
      o.offset += start * in.strides[static_cast<size_t>(d)];
      o.shape[static_cast<size_t>(d)] = op.attrs.at("sizes")[k].get<int64_t>();
    } else if (n == "slice" || n == "narrow") {
      const int d = dim_attr("dim", 0);
      if (d < 0 || d >= rank) return std::nullopt;
      const int64_t size = in.shape[static_cast<size_t>(d)];
      const int64_t step = static_cast<int64_t>(attr_number(op, "step", 1));
      int64_t start = static_cast<int64_t>(attr_number(op, "start", 0));
      if (start < 0) start += size;
      start = std::clamp<int64_t>(start, 0, size);
      if (step < 1) return std::nullopt;
      o.offset += start * in.strides[static_cast<size_t>(d)];
      o.strides[static_cast<size_t>(d)] *= step;
      o.shape[static_cast<size_t>(d)] = want.size() == in.shape.size() ? want[static_cast<size_t>(d)] : -1;
    } else if (n == "select") {
      const int d = dim_attr("dim", 0);
      if (d < 0 || d >= rank) return std::nullopt;
      int64_t idx = static_cast<int64_t>(attr_number(op, "index", 0));
      if (idx < 0) idx += in.shape[static_cast<size_t>(d)];
      if (idx < 0 || idx >= in.shape[static_cast<size_t>(d)]) return std::nullopt;
      o.offset += idx * in.strides[static_cast<size_t>(d)];
      o.shape.erase(o.shape.begin() + d);
      o.strides.erase(o.strides.begin() + d);
    } else if (is_permute(n)) {
      auto p = op_permutation(op, rank);
      if (!p) return std::nullopt;
      for (int i = 0; i < rank; ++i) {
        o.shape[static_cast<size_t>(i)] = in.shape[static_cast<size_t>((*p)[static_cast<size_t>(i)])];
        o.strides[static_cast<size_t>(i)] = in.strides[static_cast<size_t>((*p)[static_cast<size_t>(i)])];
      }
    } else if (n == "expand") {
      if (want.size() < in.shape.size()) return std::nullopt;
      const size_t lead = want.size() - in.shape.size();
      o.shape = want;
      o.strides.assign(want.size(), 0);
      for (size_t i = 0; i < in.shape.size(); ++i) {
        if (in.shape[i] == want[lead + i]) o.strides[lead + i] = in.strides[i];
        else if (in.shape[i] != 1) return std::nullopt;
      }
    } else if (n == "dropout") {
      if (attr_bool(op, "training", false) || attr_bool(op, "train", false)) return std::nullopt;
    } else if (op_class(op) == OpClass::view) {  // reshape, view, flatten, (un)squeeze, contiguous, clone
      auto st = lower_reshape_strides(in.shape, in.strides, want);
      if (!st) return std::nullopt;
      o.shape = want;
      o.strides = *st;
    } else {
      return std::nullopt;
    }
    if (o.shape != want) return std::nullopt;  // what the op sees must be what the view reads
    return o;
  }
};

}  // namespace

Status pass_strided_copies(LowerState& s) { return StridedCopies(s).run(); }

}  // namespace ucut::lower
