// problem_parse / problem_load: reads problem.json (docs/problem-ir.md, schema v1) and validates
// every field, reporting the first problem with its JSON path ("ops[3].inputs[1]: unknown tensor
// 't9'"). Fields this version does not know are ignored, so the schema can grow additively. Numbers
// may be written "inf", "-inf" or "nan" (problem_number).
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "problem/problem.h"
#include "support/diagnostics.h"
#include "support/fs.h"

namespace ucut::problem {

namespace {

using nlohmann::json;

// Thrown inside this file only; problem_parse turns it into an Error.
struct Reject {
  std::string where;  // JSON path
  std::string what;
  std::string hint;
};

[[noreturn]] void reject(const std::string& where, const std::string& what,
                         const std::string& hint = {}) {
  throw Reject{where, what, hint};
}

std::string type_name(const json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  return "an object";
}

std::string join_path(const std::string& base, const std::string& key) {
  return base.empty() ? key : base + "." + key;
}

std::string index_path(const std::string& base, size_t i) { return fmt::format("{}[{}]", base, i); }

const json* field(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const json& require(const json& obj, const std::string& where, const char* key) {
  const json* f = field(obj, key);
  if (!f) reject(where.empty() ? std::string(key) : where, fmt::format("missing field '{}'", key));
  return *f;
}

std::string as_string(const json& j, const std::string& where) {
  if (!j.is_string()) reject(where, fmt::format("expected a string, found {}", type_name(j)));
  return j.get<std::string>();
}

int64_t as_int(const json& j, const std::string& where, int64_t min_value) {
  int64_t v = 0;
  if (j.is_number_integer()) {
    if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      reject(where, "integer too large");
    v = j.get<int64_t>();
  } else if (j.is_number_float() && std::isfinite(j.get<double>()) &&
             std::floor(j.get<double>()) == j.get<double>() && std::fabs(j.get<double>()) < 9e18) {
    v = static_cast<int64_t>(j.get<double>());
  } else {
    reject(where, fmt::format("expected an integer, found {}", j.is_number() ? j.dump() : type_name(j)));
  }
  if (v < min_value)
    reject(where, min_value == 0 ? fmt::format("expected a non-negative integer, found {}", v)
                                 : fmt::format("expected an integer >= {}, found {}", min_value, v));
  return v;
}

const json& as_array(const json& j, const std::string& where) {
  if (!j.is_array()) reject(where, fmt::format("expected an array, found {}", type_name(j)));
  return j;
}

const json& as_object(const json& j, const std::string& where) {
  if (!j.is_object()) reject(where, fmt::format("expected an object, found {}", type_name(j)));
  return j;
}

// A number in problem.json: a JSON number or a non-finite one's string (problem_number).
double number(const json& j, const std::string& where) {
  if (auto v = problem_number(j)) return *v;
  reject(where, fmt::format("expected a number (or \"inf\", \"-inf\", \"nan\"), found {}",
                            j.is_string() ? "'" + j.get<std::string>() + "'" : type_name(j)));
}

// A constant's nested literal list, flattened row-major.
void read_values(const json& j, const std::string& where, std::vector<double>& out) {
  if (!j.is_array()) {
    out.push_back(number(j, where));
    return;
  }
  for (size_t i = 0; i < j.size(); ++i) read_values(j[i], index_path(where, i), out);
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string guess = diag_closest(word, candidates);
  return guess.empty() ? std::string() : fmt::format("did you mean '{}'?", guess);
}

std::vector<std::string> kind_names() {
  return {"input", "parameter", "buffer", "intermediate", "output", "constant"};
}

Tensor read_tensor(const json& j, const std::string& where) {
  as_object(j, where);
  Tensor t;
  t.name = as_string(require(j, where, "name"), join_path(where, "name"));
  if (t.name.empty()) reject(join_path(where, "name"), "a tensor name must not be empty");

  std::string kind = as_string(require(j, where, "kind"), join_path(where, "kind"));
  auto k = tensor_kind_from_name(kind);
  if (!k)
    reject(join_path(where, "kind"), fmt::format("unknown tensor kind '{}'", kind),
           did_you_mean(kind, kind_names()).empty()
               ? "kinds are input, parameter, buffer, intermediate, output, constant"
               : did_you_mean(kind, kind_names()));
  t.kind = *k;

  std::string dtype = as_string(require(j, where, "dtype"), join_path(where, "dtype"));
  auto d = dtype_from_name(dtype);
  if (!d) {
    std::string hint = did_you_mean(dtype, dtype_names());
    reject(join_path(where, "dtype"), fmt::format("unknown dtype '{}'", dtype),
           hint.empty() ? "dtypes are f16, bf16, f32, f64, i8, i16, i32, i64, u8, bool" : hint);
  }
  t.dtype = *d;

  std::string shape_path = join_path(where, "shape");
  const json& shape = as_array(require(j, where, "shape"), shape_path);
  for (size_t i = 0; i < shape.size(); ++i) t.shape.push_back(as_int(shape[i], index_path(shape_path, i), 0));
  // Sizes beyond 2^62 bytes are not a real problem; they would overflow the byte arithmetic.
  double elems = 1;
  for (auto s : t.shape) elems *= double(s);
  if (elems * 8 > 4.6e18) reject(shape_path, "tensor is too large (more than 2^62 bytes)");

  if (const json* idx = field(j, "index"); idx && !idx->is_null())
    t.index = int(as_int(*idx, join_path(where, "index"), 0));
  if (const json* sd = field(j, "state_dict"); sd && !sd->is_null())
    t.state_dict = as_string(*sd, join_path(where, "state_dict"));
  if (const json* v = field(j, "value"); v && !v->is_null()) {
    std::string vp = join_path(where, "value");
    if (v->is_array()) {
      read_values(*v, vp, t.values);
      if (int64_t(t.values.size()) != t.numel())
        reject(vp, fmt::format("a literal of {} elements for a tensor of {}", t.values.size(), t.numel()));
    } else {
      t.value = number(*v, vp);
    }
  }
  if (const json* st = field(j, "structure"); st && !st->is_null()) {
    const std::string sp = join_path(where, "structure");
    if (!st->is_object()) reject(sp, "structure must be an object {\"kind\": \"tril\" | \"triu\", \"diagonal\": int}");
    const std::string kind = as_string(require(*st, sp, "kind"), join_path(sp, "kind"));
    if (kind != "tril" && kind != "triu")
      reject(join_path(sp, "kind"), fmt::format("unknown structure kind '{}'", kind), "structures are tril and triu");
    if (t.kind != TensorKind::buffer && t.kind != TensorKind::constant)
      reject(sp, "only a buffer or a constant has a structure (its values are fixed by the problem)");
    if (t.shape.size() < 2) reject(sp, "a triangular structure needs a tensor of rank 2 or more");
    for (size_t d = 0; d + 2 < t.shape.size(); ++d)
      if (t.shape[d] != 1) reject(sp, "a triangular structure needs every dim but the last two to be 1");
    Tensor::Triangle tri;
    tri.lower = kind == "tril";
    tri.diagonal = as_int(require(*st, sp, "diagonal"), join_path(sp, "diagonal"), std::numeric_limits<int64_t>::min());
    t.triangle = tri;
  }
  return t;
}

class TensorNames {
 public:
  void add(const Tensor& t, const std::string& where) {
    auto [it, inserted] = first_.emplace(t.name, where);
    if (!inserted)
      reject(join_path(where, "name"),
             fmt::format("duplicate tensor name '{}' (first defined at {})", t.name, it->second),
             "tensor names must be unique");
    names_.push_back(t.name);
  }
  void check(const std::string& name, const std::string& where) const {
    if (!first_.count(name))
      reject(where, fmt::format("unknown tensor '{}'", name), did_you_mean(name, names_));
  }

 private:
  std::unordered_map<std::string, std::string> first_;
  std::vector<std::string> names_;
};

Op read_op(const json& j, const std::string& where, size_t position, const TensorNames& names) {
  as_object(j, where);
  Op op;
  op.id = int(as_int(require(j, where, "id"), join_path(where, "id"), 0));
  if (size_t(op.id) != position)
    reject(join_path(where, "id"), fmt::format("expected {} (the op's position), found {}", position, op.id));
  op.op = as_string(require(j, where, "op"), join_path(where, "op"));
  if (op.op.empty()) reject(join_path(where, "op"), "an op name must not be empty");

  std::string in_path = join_path(where, "inputs");
  const json& ins = as_array(require(j, where, "inputs"), in_path);
  for (size_t i = 0; i < ins.size(); ++i) {
    std::string p = index_path(in_path, i);
    Operand operand;
    if (ins[i].is_null()) {
      // an absent optional operand before a present one (docs/problem-ir.md)
    } else if (ins[i].is_string()) {
      operand.tensor = ins[i].get<std::string>();
      names.check(operand.tensor, p);
    } else if (ins[i].is_object() && ins[i].contains("scalar")) {
      const json& s = ins[i]["scalar"];
      operand.scalar = s.is_boolean() ? (s.get<bool>() ? 1.0 : 0.0) : number(s, p + ".scalar");
    } else {
      reject(p, fmt::format("expected a tensor name, {{\"scalar\": number}} or null, found {}", type_name(ins[i])));
    }
    op.inputs.push_back(std::move(operand));
  }

  std::string out_path = join_path(where, "outputs");
  const json& outs = as_array(require(j, where, "outputs"), out_path);
  for (size_t i = 0; i < outs.size(); ++i) {
    std::string name = as_string(outs[i], index_path(out_path, i));
    names.check(name, index_path(out_path, i));
    op.outputs.push_back(std::move(name));
  }

  if (const json* a = field(j, "attrs"); a && !a->is_null()) op.attrs = as_object(*a, join_path(where, "attrs"));
  op.flops = as_int(require(j, where, "flops"), join_path(where, "flops"), 0);
  std::string cls = as_string(require(j, where, "flop_class"), join_path(where, "flop_class"));
  if (cls == "tensor") {
    op.flop_class = FlopClass::tensor;
  } else if (cls == "simt") {
    op.flop_class = FlopClass::simt;
  } else {
    reject(join_path(where, "flop_class"), fmt::format("unknown FLOP class '{}'", cls),
           "use 'tensor' (tensor-core eligible) or 'simt'");
  }
  if (const json* l = field(j, "line"); l && !l->is_null()) op.line = int(as_int(*l, join_path(where, "line"), 0));
  if (const json* f = field(j, "from"); f && !f->is_null()) op.from = as_string(*f, join_path(where, "from"));
  return op;
}

void read_name_list(const json& root, const char* key, const Problem& p, const TensorNames& names,
                    std::vector<std::string>& out) {
  const json& list = as_array(require(root, "", key), key);
  for (size_t i = 0; i < list.size(); ++i) {
    std::string where = index_path(key, i);
    std::string name = as_string(list[i], where);
    names.check(name, where);
    const Tensor* t = p.find_tensor(name);
    bool is_inputs = std::string(key) == "inputs";
    if (is_inputs && t->kind != TensorKind::input)
      reject(where, fmt::format("tensor '{}' is listed as an input but its kind is '{}'", name,
                                tensor_kind_name(t->kind)),
             "problem inputs must have kind 'input'");
    if (!is_inputs && t->kind == TensorKind::intermediate)
      reject(where, fmt::format("tensor '{}' is listed as an output but its kind is 'intermediate'", name),
             "a returned tensor must have kind 'output' (or 'input' when returned unchanged)");
    out.push_back(std::move(name));
  }
}

// Every intermediate and output must be produced by an op before an op reads it.
void check_def_use(const Problem& p) {
  std::unordered_set<std::string> produced;
  for (const Op& op : p.ops) {
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (!op.inputs[i].is_tensor()) continue;
      const Tensor* t = p.find_tensor(op.inputs[i].tensor);
      bool needs_producer = t->kind == TensorKind::intermediate || t->kind == TensorKind::output;
      if (needs_producer && !produced.count(t->name))
        reject(fmt::format("ops[{}].inputs[{}]", op.id, i),
               fmt::format("{} tensor '{}' is read before any op produces it",
                           tensor_kind_name(t->kind), t->name),
               "ops must be listed in execution order");
    }
    for (const auto& o : op.outputs) produced.insert(o);
  }
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const Tensor* t = p.find_tensor(p.outputs[i]);
    if (t->kind == TensorKind::output && !produced.count(t->name))
      reject(index_path("outputs", i), fmt::format("output '{}' is never produced by an op", t->name));
  }
}

Problem read_problem(const json& root) {
  as_object(root, "(document)");
  Problem p;
  const json* schema = field(root, "schema");
  if (!schema) reject("schema", fmt::format("missing field 'schema'; this ucutlass reads '{}'", kSchema));
  p.schema = as_string(*schema, "schema");
  if (p.schema != kSchema)
    reject("schema", fmt::format("unknown schema version '{}'; this ucutlass reads '{}'", p.schema, kSchema),
           "re-extract the problem with the ucutlass_torch that matches this ucutlass");

  p.name = as_string(require(root, "", "name"), "name");
  if (const json* f = field(root, "source"); f && !f->is_null()) p.source = as_string(*f, "source");
  if (const json* f = field(root, "source_sha256"); f && !f->is_null()) p.source_sha256 = as_string(*f, "source_sha256");
  if (const json* f = field(root, "doc"); f && !f->is_null()) p.doc = as_string(*f, "doc");
  if (const json* f = field(root, "init_seed"); f && !f->is_null())
    p.init_seed = as_int(*f, "init_seed", std::numeric_limits<int64_t>::min());
  if (const json* f = field(root, "torch_version"); f && !f->is_null()) p.torch_version = as_string(*f, "torch_version");
  if (const json* f = field(root, "init_args"); f && !f->is_null()) p.init_args = as_array(*f, "init_args");
  if (const json* f = field(root, "extra_inputs"); f && !f->is_null()) p.extra_inputs = as_array(*f, "extra_inputs");

  TensorNames names;
  const json& tensors = as_array(require(root, "", "tensors"), "tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::string where = index_path("tensors", i);
    Tensor t = read_tensor(tensors[i], where);
    names.add(t, where);
    p.tensors.push_back(std::move(t));
  }
  const json& ops = as_array(require(root, "", "ops"), "ops");
  for (size_t i = 0; i < ops.size(); ++i) p.ops.push_back(read_op(ops[i], index_path("ops", i), i, names));
  read_name_list(root, "inputs", p, names, p.inputs);
  read_name_list(root, "outputs", p, names, p.outputs);
  check_def_use(p);
  return p;
}

}  // namespace

Result<Problem> problem_parse(const std::string& json_text, const std::string& path) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    return make_error(ErrorCode::invalid_input, fmt::format("{}: invalid JSON: {}", path, what),
                      "problem.json files are written by 'ucutlass extract'");
  }
  try {
    return read_problem(root);
  } catch (const Reject& r) {
    return make_error(ErrorCode::invalid_input, fmt::format("{}: {}: {}", path, r.where, r.what), r.hint);
  } catch (const json::exception& e) {
    return make_error(ErrorCode::invalid_input, fmt::format("{}: {}", path, e.what()));
  }
}

Result<Problem> problem_load(const std::string& path) {
  auto text = fs_read(path);
  if (!text) return text.error();
  return problem_parse(*text, path);
}

}  // namespace ucut::problem
