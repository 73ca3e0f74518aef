#include "dsl/checker.h"

#include <algorithm>
#include <cstdio>

#include "dsl/kinds/kinds.h"
#include "dsl/names.h"

namespace ucut::dsl {

std::optional<Program> dsl_check(const AstProgram& ast, const std::string& default_name,
                                 std::vector<Diagnostic>& diags) {
  detail::Checker c(ast, diags);
  return c.run(default_name);
}

namespace detail {

namespace {
bool valid_program_name(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}
}  // namespace

void Checker::error(Span at, std::string message, std::string hint) {
  diags_.push_back(Diagnostic{Severity::error, at, std::move(message), std::move(hint)});
  ++errors_;
}

std::string Checker::did_you_mean_tensor(const std::string& name) const {
  std::vector<std::string> names;
  for (const auto& t : prog_.tensors) names.push_back(t.name);
  std::string g = diag_closest(name, names);
  return g.empty() ? "" : "did you mean '" + g + "'?";
}

const Tensor* Checker::need_tensor(const AstName& n, const std::string& what) {
  if (const Tensor* t = tensor(n.text)) return t;
  std::string hint = did_you_mean_tensor(n.text);
  if (hint.empty()) hint = "declare it first, e.g. 'in " + n.text + " : f32[1024, 1024]'";
  error(n.span, "unknown tensor '" + n.text + "'" + (what.empty() ? "" : " (" + what + ")"), hint);
  return nullptr;
}

std::string Checker::shape_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

std::string Checker::tensor_str(const Tensor& t) {
  return t.name + " : " + dsl_dtype_str(t.dtype) + shape_str(t.shape);
}

const AstKnob* Checker::knob(const AstStage& s, const std::string& name) const {
  for (const auto& k : s.knobs)
    if (k.name.text == name) return &k;
  return nullptr;
}

const AstKnob* Checker::set_knob(const AstStage& s, const std::string& name) const {
  const AstKnob* k = knob(s, name);
  return k && !(k->kind == AstKnob::Kind::word && k->text == "auto") ? k : nullptr;
}

const AstBlock* Checker::block(const AstStage& s, const std::string& name) const {
  for (const auto& b : s.blocks)
    if (b.keyword.text == name) return &b;
  return nullptr;
}

bool Checker::split_stage_args(const AstStage& s, const std::string& what, const std::vector<std::string>& keys,
                               const std::string& operands_msg, const std::string& example,
                               const std::string& no_keys_hint, std::vector<const AstArg*>& pos,
                               std::map<std::string, const AstArg*>& kw) {
  for (const auto& a : s.args) {
    if (!a.key) {
      if (!kw.empty()) {
        error(a.span, "positional arguments come before key=value arguments", "move it to the front");
        return false;
      }
      if (a.kind != AstArg::Kind::name || a.transposed) {
        error(a.span, operands_msg, example);
        return false;
      }
      pos.push_back(&a);
      continue;
    }
    if (std::find(keys.begin(), keys.end(), a.key->text) == keys.end()) {
      std::string list;
      for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
      const std::string g = diag_closest(a.key->text, keys);
      error(a.key->span, what + " has no setting '" + a.key->text + "'",
            !g.empty() ? "did you mean '" + g + "'?" : list.empty() ? no_keys_hint : "settings: " + list);
      return false;
    }
    if (kw.count(a.key->text)) {
      error(a.key->span, "'" + a.key->text + "' is given twice", "keep one");
      return false;
    }
    kw[a.key->text] = &a;
  }
  return true;
}

bool Checker::check_knob_names(const AstStage& s) {
  const auto& allowed = dsl_stage_knobs(s.kind.text);
  std::vector<std::string> all = dsl_stage_knobs("gemm");
  for (const auto& k : dsl_stage_knobs("rowwise")) all.push_back(k);
  bool ok = true;
  std::set<std::string> seen;
  for (const auto& k : s.knobs) {
    const std::string& n = k.name.text;
    if (std::find(allowed.begin(), allowed.end(), n) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      if (std::find(all.begin(), all.end(), n) != all.end()) {
        error(k.name.span, "the knob '" + n + "' does not apply to " + s.kind.text + " stages",
              s.kind.text + " stages take: " + list);
      } else {
        std::string g = diag_closest(n, allowed);
        error(k.name.span, "unknown knob '" + n + "'",
              g.empty() ? s.kind.text + " stages take: " + list : "did you mean '" + g + "'?");
      }
      ok = false;
      continue;
    }
    if (!seen.insert(n).second) {
      error(k.name.span, "the knob '" + n + "' is given twice", "keep one '" + n + "' line");
      ok = false;
    }
  }
  return ok;
}

std::optional<int> Checker::int_knob(const AstStage& s, const std::string& name, int lo, int hi,
                                     bool& ok, const std::string& hint, bool pow2) {
  const AstKnob* k = set_knob(s, name);
  if (!k) return std::nullopt;
  bool good = k->kind == AstKnob::Kind::number && k->integral && !k->dims.empty() &&
              k->dims[0] >= lo && k->dims[0] <= hi;
  if (good && pow2) good = (k->dims[0] & (k->dims[0] - 1)) == 0;
  if (!good) {
    std::string range = pow2 ? "a power of two from " + std::to_string(lo) + " to " + std::to_string(hi)
                             : "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
    if (k->kind == AstKnob::Kind::word) {
      std::string g = diag_closest(k->text, {"auto"});
      error(k->value_span, "invalid value '" + k->text + "' for " + name + ": expected auto or " + range,
            g.empty() ? hint : "did you mean 'auto'?");
    } else {
      error(k->value_span, "invalid value '" + k->text + "' for " + name + ": expected auto or " + range, hint);
    }
    ok = false;
    return std::nullopt;
  }
  return static_cast<int>(k->dims[0]);
}

int Checker::word_knob(const AstStage& s, const std::string& name, const std::vector<std::string>& values, bool& ok) {
  const AstKnob* k = knob(s, name);
  if (!k) return 0;
  for (size_t i = 0; i < values.size(); ++i)
    if (k->kind == AstKnob::Kind::word && k->text == values[i]) return static_cast<int>(i);
  std::string list;
  for (const auto& v : values) list += (list.empty() ? "" : ", ") + v;
  std::string g = diag_closest(k->text, values);
  error(k->value_span, "invalid value '" + k->text + "' for " + name,
        g.empty() ? name + " is one of: " + list : "did you mean '" + g + "'?");
  ok = false;
  return 0;
}

bool Checker::check_blocks_allowed(const AstStage& s, const std::vector<std::string>& allowed) {
  bool ok = true;
  std::set<std::string> seen;
  for (const auto& b : s.blocks) {
    const std::string& n = b.keyword.text;
    if (std::find(allowed.begin(), allowed.end(), n) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "'" : ", '") + a + "'";
      error(b.keyword.span, s.kind.text + " stages have no '" + n + "' block",
            list.empty() ? "remove the block" : "allowed here: " + list);
      ok = false;
    } else if (!seen.insert(n).second) {
      error(b.keyword.span, "the block '" + n + "' is given twice", "merge the two blocks into one");
      ok = false;
    }
  }
  return ok;
}

bool Checker::check_args_none(const AstStage& s) {
  if (s.args.empty()) return true;
  error(s.args[0].span, s.kind.text + " stages take no arguments",
        "name the tensors inside the body: 'stage y = elementwise { body { y = x * 2 } }'");
  return false;
}

// `view v : DT[shape] = BASE strides [..] offset N`: a declared, non-view BASE of the same dtype,
// one stride per dim (negative ones walk backwards: a flip), and every element inside BASE.
bool Checker::check_view_decl(const AstDecl& d, Tensor& t) {
  if (!d.view_base) {
    error(d.name.span, "view '" + t.name + "' names no tensor", "write 'view v : f32[..] = x strides [..] offset 0'");
    return false;
  }
  const Tensor* b = need_tensor(*d.view_base, "viewed tensor");
  if (!b) return false;
  if (b->role == TensorRole::view) {
    error(d.view_base->span, "'" + b->name + "' is itself a view", "view the tensor '" + b->view_of + "' with composed strides");
    return false;
  }
  if (b->dtype != t.dtype) {
    error(d.dtype.span, "view '" + t.name + "' is " + dsl_dtype_str(t.dtype) + " but '" + b->name + "' is " +
                            dsl_dtype_str(b->dtype),
          "a view reads the elements as they are: declare it " + std::string(dsl_dtype_str(b->dtype)));
    return false;
  }
  if (d.view_strides.size() != t.shape.size()) {
    error(d.view_span, "view '" + t.name + "' has " + std::to_string(t.shape.size()) + " dims but " +
                           std::to_string(d.view_strides.size()) + " strides",
          "give one stride (in elements) per dimension");
    return false;
  }
  // the first and last elements read: each dim at 0 or at its end, whichever its stride's sign
  // makes smaller (larger); a reach past kMaxElements is past any tensor (and its product would
  // overflow)
  int64_t first = d.view_offset, last = d.view_offset;
  for (size_t i = 0; i < t.shape.size(); ++i) {
    const int64_t n = t.shape[i] - 1, st = d.view_strides[i];
    if (st != 0 && n > kMaxElements / (st < 0 ? -st : st)) {
      (st < 0 ? first : last) = st < 0 ? -kMaxElements : kMaxElements;
      break;
    }
    (st < 0 ? first : last) += n * st;
  }
  if (first < 0) {
    error(d.view_span, "view '" + t.name + "' reaches element " + std::to_string(first) + " of '" + b->name +
                           "', before its first",
          "a negative stride needs an offset at the dim's last element: check the offset");
    return false;
  }
  if (last >= b->numel()) {
    error(d.view_span, "view '" + t.name + "' reaches element " + std::to_string(last) + " of '" + b->name +
                           "', which has " + std::to_string(b->numel()),
          "check the strides and offset against " + tensor_str(*b));
    return false;
  }
  t.view_of = b->name;
  t.view_strides = d.view_strides;
  t.view_offset = d.view_offset;
  return true;
}

std::optional<Program> Checker::run(const std::string& default_name) {
  prog_.version = ast_.version;
  if (ast_.version != 1)
    error(ast_.version_span, "unsupported language version " + std::to_string(ast_.version),
          "this ucutlass reads version 1: write 'ucut 1'");
  if (ast_.name) {
    prog_.name = ast_.name->text;
  } else {
    prog_.name = valid_program_name(default_name) ? default_name : "program";
  }

  std::set<std::string> names;
  auto claim = [&](const AstName& n, const char* what) {
    if (dsl_reserved_words().count(n.text)) {
      error(n.span, "'" + n.text + "' is a reserved word and cannot name a " + what, "choose another name");
      return false;
    }
    if (!names.insert(n.text).second) {
      error(n.span, "'" + n.text + "' is declared twice", "give each tensor and scalar its own name");
      return false;
    }
    return true;
  };

  for (const auto& d : ast_.decls) {
    if (!claim(d.name, "tensor")) continue;
    Tensor t;
    t.name = d.name.text;
    t.span = d.name.span;
    const std::string& r = d.role.text;
    t.role = r == "in"      ? TensorRole::in
             : r == "param" ? TensorRole::param
             : r == "out"   ? TensorRole::out
             : r == "view"  ? TensorRole::view
                            : TensorRole::tmp;
    auto dt = dsl_dtype_parse(d.dtype.text);
    if (!dt) {
      std::string g = diag_closest(d.dtype.text, dsl_dtype_names());
      error(d.dtype.span, "unknown dtype '" + d.dtype.text + "'",
            g.empty() ? "dtypes: f16, bf16, f32, i32, i64, u8, bool" : "did you mean '" + g + "'?");
      continue;
    }
    t.dtype = *dt;
    bool good = true;
    for (size_t i = 0; i < d.shape.size(); ++i)
      if (d.shape[i] <= 0) {
        error(d.dim_spans[i], "dimension sizes must be positive, found " + std::to_string(d.shape[i]),
              "write the size of the dimension");
        good = false;
      }
    // a view stores nothing: up to 10 dims (a grouped 3-D transposed conv read back as NCHW,
    // [N, G, K/G, Q, s, Q, s, Q, s])
    const size_t max_rank = t.role == TensorRole::view ? 10 : 6;
    if (d.shape.size() > max_rank) {
      error(d.shape_span, (t.role == TensorRole::view ? "views have at most 10 dimensions, found "
                                                      : "tensors have at most 6 dimensions, found ") +
                              std::to_string(d.shape.size()),
            "reshape the tensor in the PyTorch program");
      good = false;
    }
    if (!good) continue;
    t.shape = d.shape;
    // The element count, checked: a product that overflows 64 bits once wrapped to a small (or
    // zero) count that passed here and crashed a later division.
    if (auto numel = checked_product(t.shape); !numel || *numel > kMaxElements) {
      double approx = 1;
      for (int64_t dim : t.shape) approx *= static_cast<double>(dim);
      char count[32];
      std::snprintf(count, sizeof count, "%.3g", approx);
      error(d.shape_span, "tensor '" + t.name + "' has " + count + " elements, more than a tensor may have (2^40)",
            "a tensor holds at most 2^40 (about 1.1e12) elements; check the sizes, or split the problem");
      continue;
    }
    if (t.role == TensorRole::view && !check_view_decl(d, t)) continue;
    if (t.role == TensorRole::param) {
      if (!d.binding) {
        error(d.name.span, "param '" + t.name + "' needs its state_dict key",
              "write: param " + t.name + " : ... = \"" + t.name + "\"");
        continue;
      }
      if (d.binding->text.empty()) {
        error(d.binding->span, "the state_dict key of '" + t.name + "' is empty", "write the key, e.g. \"linear.weight\"");
        continue;
      }
      t.binding = d.binding->text;
    } else if (d.binding) {
      error(d.binding->span, "only param tensors are bound to a state_dict key",
            "remove '= \"" + d.binding->text + "\"' or declare '" + t.name + "' as param");
      continue;
    }
    prog_.tensors.push_back(std::move(t));
  }
  for (const auto& s : ast_.scalars) {
    if (!claim(s.name, "scalar")) continue;
    prog_.scalars.push_back(Scalar{s.name.text, s.value, s.name.span});
  }
  if (errors_) return std::nullopt;  // stages refer to declarations: check them on a clean base

  std::map<std::string, std::pair<int, Span>> written;  // tensor -> (stage index, where)
  // tmp/out tensors written in slices: stages writing contiguous views of them (docs/language.md,
  // "Views"); such a tensor counts as written once a slice is, and no stage writes it whole
  std::set<std::string> sliced;
  for (size_t i = 0; i < ast_.stages.size(); ++i) {
    const AstStage& s = ast_.stages[i];
    int before = errors_;
    Stage st;
    st.name = "s" + std::to_string(i);
    st.span = s.span;
    // The outputs on the left: declared, writable, not written yet.
    std::vector<TensorUse> writes;
    std::set<std::string> lhs;
    for (const auto& o : s.outputs) {
      const Tensor* t = need_tensor(o, "stage output");
      if (!t) continue;
      if (t->role == TensorRole::view) {
        // a contiguous slice of a tmp/out tensor (its strides row-major for its shape) may be written
        const Tensor* b = tensor(t->view_of);
        bool contiguous = b && (b->role == TensorRole::tmp || b->role == TensorRole::out) && b->dtype == t->dtype &&
                          t->view_offset >= 0 && t->view_offset + t->numel() <= b->numel();
        for (size_t d = t->shape.size(), st = 1; contiguous && d-- > 0;) {
          contiguous = t->shape[d] == 1 || t->view_strides[d] == static_cast<int64_t>(st);
          st *= static_cast<size_t>(t->shape[d]);
        }
        if (!contiguous) {
          error(o.span, "stage writes '" + o.text + "', a view of '" + t->view_of + "' that is not a contiguous slice of it",
                "a stage writes an out or tmp tensor, or a view of one with row-major strides for its shape, an offset "
                "and the same dtype (a slice); other views are read in elementwise bodies");
          continue;
        }
        if (written.count(b->name)) {
          error(o.span, "stage writes '" + o.text + "', a slice of '" + b->name + "', which a stage writes whole",
                "write the tensor whole or in slices, not both");
          continue;
        }
      }
      if (t->role == TensorRole::in || t->role == TensorRole::param) {
        error(o.span, "stage writes '" + o.text + "', which is declared '" + dsl_role_str(t->role) + "'",
              "stages write out or tmp tensors: declare 'out " + o.text + "' or write a new tmp tensor");
        continue;
      }
      if (!lhs.insert(o.text).second) {
        error(o.span, "'" + o.text + "' appears twice among the stage's outputs", "list each output once");
        continue;
      }
      st.outputs.push_back(o.text);
      writes.push_back({o.text, o.span});
    }
    if (errors_ > before) continue;

    const std::string& kind = s.kind.text;
    std::vector<TensorUse> reads;
    const std::optional<StageKind> known = dsl_stage_kind_parse(kind);
    if (!known) {
      std::string g = diag_closest(kind, dsl_stage_kinds());
      std::string list;
      for (const auto& k : dsl_stage_kinds()) list += (list.empty() ? "" : ", ") + k;
      error(s.kind.span, "unknown stage kind '" + kind + "'",
            g.empty() ? "stage kinds: " + list : "did you mean '" + g + "'?");
      continue;
    }
    const DslStageKind& entry = dsl_kind(*known);
    if (entry.check_knob_names && !check_knob_names(s)) continue;  // check_torch refuses knobs itself
    size_t n_out_before = st.outputs.size();
    bool ok = (this->*entry.check)(s, st, reads);
    if (ok && errors_ == before) ok = simt_plan_ok(s, st);
    if (!ok || errors_ > before) continue;
    // Extra outputs (epilogue reductions) were appended by the stage checker, with spans in reads'
    // sibling list; record them as writes too.
    for (size_t k = n_out_before; k < st.outputs.size(); ++k) {
      Span sp = s.span;
      for (const auto& r : reads)
        if (r.name == "=" + st.outputs[k]) sp = r.span;
      writes.push_back({st.outputs[k], sp});
    }
    std::set<std::string> outs(st.outputs.begin(), st.outputs.end());
    for (const auto& r : reads) {
      if (r.name.empty() || r.name[0] == '=') continue;
      const Tensor* t = tensor(r.name);
      if (!t) continue;
      if (outs.count(r.name)) {
        error(r.span, "the stage reads '" + r.name + "', which it also writes",
              "write the result to a new tmp tensor and read that in a later stage");
        break;
      }
      if (t->role == TensorRole::view) {
        if (kind != "elementwise") {
          error(r.span, "a " + kind + " stage reads '" + r.name + "', a view of '" + t->view_of + "'",
                "only elementwise bodies read views: copy the view into a tmp tensor in an elementwise stage first");
          break;
        }
        const Tensor* b = tensor(t->view_of);
        if (b && (b->role == TensorRole::tmp || b->role == TensorRole::out) && !written.count(b->name) &&
            !sliced.count(b->name)) {
          error(r.span, "the stage reads '" + r.name + "', a view of '" + b->name + "', which no stage has written yet",
                "add a stage that writes '" + b->name + "' before this one");
          break;
        }
        continue;
      }
      if ((t->role == TensorRole::tmp || t->role == TensorRole::out) && sliced.count(r.name)) {
        error(r.span, "the stage reads '" + r.name + "', which stages write in slices",
              "read it through a view (an elementwise body)");
        break;
      }
      if ((t->role == TensorRole::tmp || t->role == TensorRole::out) && !written.count(r.name)) {
        std::string hint = "add a stage that writes '" + r.name + "' before this one";
        for (size_t j = i + 1; j < ast_.stages.size(); ++j)
          for (const auto& o : ast_.stages[j].outputs)
            if (o.text == r.name)
              hint = "'" + r.name + "' is written by the stage on line " +
                     std::to_string(ast_.stages[j].span.begin.line) + ": move that stage before this one";
        error(r.span, std::string(t->role == TensorRole::tmp ? "tmp" : "out") + " tensor '" + r.name +
                          "' is read before any stage writes it", hint);
        break;
      }
    }
    if (errors_ > before) continue;
    for (const auto& w : writes) {
      auto it = written.find(w.name);
      if (it != written.end()) {
        error(w.span, "'" + w.name + "' is already written by the stage on line " +
                          std::to_string(it->second.second.begin.line),
              "each out and tmp tensor is written by exactly one stage: write a new tmp tensor");
        continue;
      }
      if (sliced.count(w.name)) {
        error(w.span, "'" + w.name + "' is written in slices by earlier stages", "write it whole or in slices, not both");
        continue;
      }
      written[w.name] = {static_cast<int>(i), s.span};
      if (const Tensor* t = tensor(w.name); t && t->role == TensorRole::view) {
        // a slice that is the whole tensor (offset 0, every element: the tensor in another shape)
        // writes it whole, and later stages read it directly (a window stage's NCHW result read by
        // a pointwise conv's GEMM as [N, C, H*W])
        const Tensor* b = tensor(t->view_of);
        if (b && t->view_offset == 0 && t->numel() == b->numel() && !sliced.count(b->name))
          written[b->name] = {static_cast<int>(i), s.span};
        else
          sliced.insert(t->view_of);
      }
    }
    if (errors_ > before) continue;
    prog_.stages.push_back(std::move(st));
  }
  if (errors_) return std::nullopt;
  for (const auto& t : prog_.tensors) {
    if ((t.role == TensorRole::out || t.role == TensorRole::tmp) && !written.count(t.name) && !sliced.count(t.name))
      error(t.span, std::string(dsl_role_str(t.role)) + " tensor '" + t.name + "' is never written",
            "add a stage that writes it ('stage " + t.name + " = ...') or remove the declaration");
  }
  if (prog_.stages.empty() && !errors_)
    error(ast_.version_span, "the program has no stages", "add a stage, e.g. 'stage y = gemm(x, W.T)'");
  if (errors_) return std::nullopt;
  return std::move(prog_);
}

}  // namespace detail
}  // namespace ucut::dsl
