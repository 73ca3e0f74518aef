// Torch stages (dsl/program.h TorchStage): the library runs no code of its own for them; its
// launcher calls the host back (ucut_set_host, docs/kernel-abi.md) with the stage's index, and the
// host runs the stage's PyTorch operations on the same stream. What the host needs to find the
// stage's tensors and operations is in ucut_describe()'s "torch_stages" (codegen_torch_describe).
// Golden test: tests/golden/codegen/torch_stage.cu.
#include <cmath>
#include <map>

#include "codegen/library.h"
#include "codegen/stage_emitter.h"
#include "dsl/names.h"

namespace ucut::codegen {

Result<StageCode> codegen_emit_torch(const dsl::Program& /*program*/, int stage_index) {
  StageCode c;
  const std::string n = std::to_string(stage_index);
  c.definitions = codegen_torch_host_header() +
                  "// The host runs this stage's PyTorch operations (ucut_describe()'s torch_stages).\n"
                  "int ucut_s" + n + "_torch(const ucut_rt::StageArgs&) { return ucut_rt::host_torch_stage(" + n +
                  "); }\n";
  c.launcher = "ucut_s" + n + "_torch";
  c.workspace_expr = "0";
  c.config_name = "torch";
  return c;
}

namespace {

nlohmann::ordered_json number_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == std::floor(v) && std::fabs(v) < 9.0e15) return static_cast<int64_t>(v);
  return v;
}

}  // namespace

nlohmann::ordered_json codegen_torch_describe(const dsl::Program& p) {
  // Workspace offsets of the tmp tensors: the library's plan() (library.cpp) lays them out in
  // declaration order, each rounded up to 256 bytes.
  std::map<std::string, nlohmann::ordered_json> where;
  size_t off = 0;
  int arg = 0;
  for (const auto& t : p.tensors) {
    if (t.role == dsl::TensorRole::tmp) {
      where[t.name] = {{"offset", off}, {"dtype", dsl::dsl_dtype_str(t.dtype)}, {"shape", t.shape}};
      const size_t bytes = static_cast<size_t>(t.numel()) * dsl::dtype_bytes(t.dtype);
      off += (bytes + 255) / 256 * 256;
    } else {
      where[t.name] = {{"arg", arg++}};
    }
  }
  auto stages = nlohmann::ordered_json::array();
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const auto* t = std::get_if<dsl::TorchStage>(&p.stages[i].body);
    if (!t) continue;
    nlohmann::ordered_json s;
    s["stage"] = i;
    s["name"] = p.stages[i].name;
    auto tensors = nlohmann::ordered_json::object();
    for (const auto& r : t->reads) tensors[r] = where.at(r);
    for (const auto& o : p.stages[i].outputs) tensors[o] = where.at(o);
    s["tensors"] = tensors;
    auto ops = nlohmann::ordered_json::array();
    for (const auto& op : t->ops) {
      nlohmann::ordered_json j;
      j["op"] = op.op;
      auto ins = nlohmann::ordered_json::array();
      for (const auto& in : op.inputs) {
        if (in.absent) ins.push_back(nullptr);
        else if (in.tensor.empty()) ins.push_back({{"scalar", number_json(in.number)}});
        else ins.push_back(in.tensor);
      }
      j["inputs"] = ins;
      j["outputs"] = op.outputs;
      j["local"] = op.output_is_local;
      auto attrs = nlohmann::ordered_json::object();
      for (const auto& [k, v] : op.attrs) {
        if (v.kind == dsl::TorchOp::Attr::Kind::number) attrs[k] = number_json(v.number);
        else if (v.kind == dsl::TorchOp::Attr::Kind::list) attrs[k] = v.list;
        else if (v.word == "true" || v.word == "false") attrs[k] = v.word == "true";
        else if (v.word == "none") attrs[k] = nullptr;
        else attrs[k] = v.word;
      }
      j["attrs"] = attrs;
      ops.push_back(std::move(j));
    }
    s["ops"] = ops;
    stages.push_back(std::move(s));
  }
  return stages;
}

}  // namespace ucut::codegen
