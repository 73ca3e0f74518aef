// The kernel-library emitter (see library.h).
#include "codegen/library.h"

#include "dsl/names.h"

#include <algorithm>

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "codegen/epilogue_expr.h"
#include "codegen/kinds/kinds.h"
#include "dsl/gemm_rules.h"

namespace ucut::codegen {

namespace {

// A C++ string literal of arbitrary text.
std::string c_literal(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    switch (ch) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      default: o += ch;
    }
  }
  return o + "\"";
}

const char* role_name(dsl::TensorRole r) {
  switch (r) {
    case dsl::TensorRole::in: return "in";
    case dsl::TensorRole::param: return "param";
    case dsl::TensorRole::out: return "out";
    case dsl::TensorRole::tmp: return "tmp";
    case dsl::TensorRole::view: return "view";
  }
  return "?";
}

std::string describe_json(const dsl::Program& p, const LibraryOptions& o, const std::vector<std::string>& configs,
                          const std::vector<std::string>& units) {
  nlohmann::ordered_json j;
  j["abi"] = 1;
  j["name"] = p.name;
  j["program_hash"] = o.program_hash;
  j["ucutlass"] = "0.1.0";
  j["cutlass"] = "4.2.0";
  j["arch"] = "sm_90a";
  auto tensors = nlohmann::ordered_json::array();
  std::map<dsl::TensorRole, int> counts;
  for (const auto& t : p.tensors) {
    if (t.role == dsl::TensorRole::tmp || t.role == dsl::TensorRole::view) continue;
    nlohmann::ordered_json tj;
    tj["name"] = t.name;
    tj["role"] = role_name(t.role);
    tj["dtype"] = dsl::dtype_name(t.dtype);
    tj["shape"] = t.shape;
    if (t.role == dsl::TensorRole::param) tj["binding"] = t.binding;
    else tj["index"] = counts[t.role]++;
    tensors.push_back(tj);
  }
  j["tensors"] = tensors;
  auto scalars = nlohmann::ordered_json::array();
  for (const auto& s : p.scalars) scalars.push_back({{"name", s.name}, {"default", s.default_value}});
  j["scalars"] = scalars;
  auto stages = nlohmann::ordered_json::array();
  for (size_t i = 0; i < p.stages.size(); ++i) {
    nlohmann::ordered_json sj = {{"name", p.stages[i].name}, {"kind", dsl::dsl_stage_kind(p.stages[i])}, {"config", configs[i]}};
    if (!units[i].empty()) sj["unit"] = units[i];  // its stored kernel unit (docs/kernel-abi.md)
    stages.push_back(sj);
  }
  j["stages"] = stages;
  if (auto torch = codegen_torch_describe(p); !torch.empty()) j["torch_stages"] = torch;
  return j.dump();
}

}  // namespace

const std::string& codegen_torch_host_header() {
  static const std::string text = R"RT(#ifndef UCUT_TORCH_HOST_DEFINED
#define UCUT_TORCH_HOST_DEFINED
// Torch stages: the host runs them through the callback it registered with ucut_set_host.
namespace ucut_rt {
using HostTorchStage = int (*)(void* ctx, int stage);
inline HostTorchStage& host_fn() {
  static HostTorchStage fn = nullptr;
  return fn;
}
inline void*& host_ctx() {
  static void* ctx = nullptr;
  return ctx;
}
inline int host_torch_stage(int stage) {
  if (host_fn() == nullptr) {
    set_error("this library has torch stages: the host must register them with ucut_set_host first");
    return 1;
  }
  int rc = host_fn()(host_ctx(), stage);
  if (rc != 0) {
    set_error("the host's torch stage failed (code %d); the host has the details", rc);
    return 4;
  }
  return 0;
}
}  // namespace ucut_rt
#endif  // UCUT_TORCH_HOST_DEFINED
)RT";
  return text;
}

const std::string& codegen_runtime_header() {
  static const std::string text = R"RT(// ---- ucut_runtime.cuh: what every stage may use ----
#include <cuda_runtime.h>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>

#define UCUT_EXPORT extern "C" __attribute__((visibility("default")))

namespace ucut_rt {

struct StageArgs {
  void* const* tensors;   // indexed like the program's tensors (tmp tensors point into workspace)
  const double* scalars;  // indexed like the program's scalars
  void* workspace;        // this stage's private workspace
  size_t workspace_bytes;
  cudaStream_t stream;
};

// The runtime arguments of a stored GEMM kernel unit (docs/kernel-abi.md, "Stored kernel units"):
// everything that does not change its device code. The unit's host set-up is cached per distinct
// value of these bytes (fields ordered so that the struct has no padding).
struct GemmArgs {
  const void* a;
  const void* b;
  const void* c;                    // the residual (the epilogue's full-size read), or null
  void* d;
  const void* vec[16];              // by epilogue leaf: v[row] / v[col] vectors
  long long vec_batch_stride[16];   // elements between batches of a per-batch vector, 0: shared
  double scalar[16];                // by epilogue leaf: runtime scalars
  void* red[4];                     // by reduction: its output
  long long red_batch_stride[4];
  void* workspace;
  unsigned long long workspace_bytes;
  const char* name;                 // the stage's configuration, for messages
  int m, n, k, l;
  int raster_along_n;               // 0: raster along M, 1: along N
  int swizzle;                      // 1, 2, 4, 8
  int splits;                       // stream-K scheduler: > 1 split-K into that many pieces, else stream-K
  int reserved;
};

inline char* error_buffer() {
  static thread_local char buf[2048];
  return buf;
}

inline void set_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(error_buffer(), 2048, fmt, ap);
  va_end(ap);
}

// Multiprocessor count of the current device, queried once per device.
inline int sm_count() {
  static int counts[64] = {0};
  int dev = 0;
  cudaGetDevice(&dev);
  if (dev < 0 || dev >= 64) return 0;
  if (counts[dev] == 0) cudaDeviceGetAttribute(&counts[dev], cudaDevAttrMultiProcessorCount, dev);
  return counts[dev];
}

constexpr size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

}  // namespace ucut_rt
)RT";
  return text;
}

Result<StageCode> codegen_emit_stage(const dsl::Program& program, int i) {
  return codegen_stage_kind(dsl::dsl_stage_kind_of(program.stages[i])).emit(program, i);
}

Result<LibraryCode> codegen_emit_library(const dsl::Program& program, const LibraryOptions& o) {
  auto expanded = codegen_expand_split_gemms(program);
  if (!expanded) return expanded.error();
  const dsl::Program& p = *expanded;
  LibraryCode lib;
  const bool has_torch = std::any_of(p.stages.begin(), p.stages.end(), [](const dsl::Stage& st) {
    return codegen_stage_kind(dsl::dsl_stage_kind_of(st)).host;
  });
  std::vector<StageCode> codes;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    auto c = codegen_emit_stage(p, static_cast<int>(i));
    if (!c) {
      Error e = c.error();
      e.message = "stage '" + p.stages[i].name + "': " + e.message;
      return e;
    }
    lib.config_names.push_back(c->config_name);
    lib.needs_cutlass = lib.needs_cutlass || c->needs_cutlass;
    // the SIMT stages and the gemv schedules' GEMMs (the GEMM kernels without CUTLASS)
    const dsl::StageKind kind = dsl::dsl_stage_kind_of(p.stages[i]);
    bool runtime = !c->needs_cutlass || (kind != dsl::StageKind::gemm && kind != dsl::StageKind::grouped_gemm &&
                                         kind != dsl::StageKind::conv) || c->needs_runtime;
    lib.needs_simt_runtime = lib.needs_simt_runtime || runtime;
    codes.push_back(std::move(*c));
  }

  // Each stage's block: its definitions and two functions with external linkage that the ABI
  // part calls. The whole .cu holds every block; the cutlass and simt units hold their kind's.
  std::vector<std::string> blocks, unit_names;
  for (const auto& c : codes) unit_names.push_back(c.unit_name);
  for (size_t i = 0; i < codes.size(); ++i) {
    const std::string n = std::to_string(i);
    blocks.push_back("// ==== stage " + n + " '" + p.stages[i].name + "': " + codes[i].config_name + " ====\n" +
                     codes[i].definitions + "\n" +
                     "int ucut_stage_run_" + n + "(const ucut_rt::StageArgs& a) { return " + codes[i].launcher +
                     "(a); }\n" + "size_t ucut_stage_workspace_" + n +
                     "() { return ucut_rt::round_up(static_cast<size_t>(" +
                     (codes[i].workspace_expr.empty() ? std::string("0") : codes[i].workspace_expr) + "), 256); }\n\n");
  }
  auto banner = [&](const std::string& what) {
    std::string b = "// generated by ucutlass from " + o.input_name + "; do not edit\n";
    b += "// program '" + p.name + "', hash " + o.program_hash + "\n";
    if (!what.empty()) b += "// " + what + "\n";
    b += "// stages:";
    for (const auto& n : lib.config_names) b += " " + n;
    return b + "\n\n";
  };
  // The headers `of` need: a stored unit's (`includes`), a stage's code in a group unit (its
  // `includes`, or its `binding_includes` when its kernel is a stored unit and the group holds only
  // its binding), or both lists (the whole library in one file).
  enum class Inc { unit, group, both };
  auto includes = [&](const std::vector<const StageCode*>& of, bool cutlass, Inc which = Inc::both) {
    std::string b;
    if (cutlass) b += "#include \"cutlass/version.h\"  // CUTLASS_MAJOR; cutlass.h does not include it\n";
    std::set<std::string> seen;
    auto add = [&](const std::vector<std::string>& incs) {
      for (const auto& inc : incs)
        if (inc != "ucut_runtime.cuh" && seen.insert(inc).second) b += "#include \"" + inc + "\"\n";
    };
    for (const StageCode* c : of) {
      if (which != Inc::group || c->unit.empty()) add(c->includes);
      if (which == Inc::both || (which == Inc::group && !c->unit.empty())) add(c->binding_includes);
    }
    return b;
  };
  std::vector<const StageCode*> all;
  for (const auto& c : codes) all.push_back(&c);

  // Stored kernel units (StageCode::unit), each once however many stages share it, in the order
  // of their first stage.
  // (name, text, the stage whose includes it takes)
  struct Stored {
    std::string name;
    const std::string* text;
    const StageCode* code;
  };
  std::vector<Stored> stored;
  auto add_stored = [&](const std::string& name, const std::string& text, const StageCode& c) {
    if (std::none_of(stored.begin(), stored.end(), [&](const Stored& u) { return u.name == name; }))
      stored.push_back({name, &text, &c});
  };
  for (const auto& c : codes) {
    if (!c.unit.empty()) add_stored(c.unit_name, c.unit, c);
    for (const auto& [name, text] : c.more_units) add_stored(name, text, c);
  }

  std::string body;
  for (const auto& u : stored) body += "// ==== stored kernel unit " + u.name + " ====\n" + *u.text + "\n";
  for (const auto& b : blocks) body += b;
  std::string s = banner("") + includes(all, lib.needs_cutlass);
  s += "\n" + codegen_runtime_header() + "\n" + epi_functor_header(body) + "\n" + body;
  // Units (see library.h): each stored kernel unit alone (its object is shared with every other
  // stage and program of its form), the other CUTLASS stages together (they share most of their
  // template instantiations: three GEMMs in one file cost ~1.3x one, in three files ~3x), the SIMT
  // stages together, and the ABI with the stored units' bindings. A program of SIMT stages only,
  // or of unstored CUTLASS stages only, stays one unit.
  std::vector<size_t> cutlass_stages, simt_stages;
  // A stage with a stored unit whose binding holds device code (binding_device) compiles its
  // binding with the SIMT stages.
  for (size_t i = 0; i < codes.size(); ++i)
    if (codes[i].unit.empty()) (codes[i].needs_cutlass ? cutlass_stages : simt_stages).push_back(i);
    else if (codes[i].binding_device) simt_stages.push_back(i);
  std::string abi_decls, bindings;
  if (!stored.empty() || (!cutlass_stages.empty() && !simt_stages.empty())) {
    for (const auto& u : stored)
      lib.units.push_back({u.name,
                           "// generated by ucutlass; do not edit\n" + includes({u.code}, true, Inc::unit) + "\n" +
                               codegen_runtime_header() + "\n" + epi_functor_header(*u.text) + "\n" + *u.text,
                           true});
    for (const auto* group : {&cutlass_stages, &simt_stages}) {
      if (group->empty()) continue;
      // No program name or hash, input name or other group here: the same stages in another
      // candidate (or program) are the same text, so their object comes from the cache.
      std::string unit = "// generated by ucutlass; do not edit\n// stages:";
      std::vector<const StageCode*> of;
      std::string code;
      for (size_t i : *group) {
        unit += " " + std::to_string(i) + " " + codes[i].config_name;
        of.push_back(&codes[i]);
        code += blocks[i];
        abi_decls += "int ucut_stage_run_" + std::to_string(i) + "(const ucut_rt::StageArgs& a);\n" +
                     "size_t ucut_stage_workspace_" + std::to_string(i) + "();\n";
      }
      unit += "\n\n" + includes(of, group == &cutlass_stages, Inc::group) + "\n" + codegen_runtime_header() + "\n" +
              epi_functor_header(code) + "\n" + code;
      lib.units.push_back({group == &cutlass_stages ? "cutlass" : "simt", std::move(unit)});
    }
    for (size_t i = 0; i < codes.size(); ++i)
      if (!codes[i].unit.empty() && !codes[i].binding_device) bindings += blocks[i];
  }
  const size_t abi_begin = s.size();
  s += "// ==== workspace plan and the C ABI (docs/kernel-abi.md) ====\nnamespace {\n\n";
  s += "constexpr int kNumTensors = " + std::to_string(p.tensors.size()) + ";\n";
  int n_abi = 0;
  std::string abi_index = "constexpr int kAbiIndex[] = {", tmp_bytes = "constexpr size_t kTmpBytes[] = {";
  // a view's pointer: its tensor's plus the offset (docs/language.md, views)
  std::string view_base = "constexpr int kViewBase[] = {", view_offset = "constexpr size_t kViewOffsetBytes[] = {";
  for (const auto& t : p.tensors) {
    const bool tmp = t.role == dsl::TensorRole::tmp, view = t.role == dsl::TensorRole::view;
    abi_index += std::to_string(tmp || view ? -1 : n_abi++) + ", ";
    size_t bytes = static_cast<size_t>(t.numel()) * dsl::dtype_bytes(t.dtype);
    tmp_bytes += std::to_string(tmp ? bytes : 0) + "u, ";
    int base = -1;
    for (size_t j = 0; view && j < p.tensors.size(); ++j)
      if (p.tensors[j].name == t.view_of) base = static_cast<int>(j);
    view_base += std::to_string(base) + ", ";
    view_offset += std::to_string(view ? static_cast<size_t>(t.view_offset) * dsl::dtype_bytes(t.dtype) : 0) + "u, ";
  }
  s += abi_index + "};  // position in ucut_run's tensors, -1: tmp or view\n";
  s += tmp_bytes + "};\n";
  s += view_base + "};  // the tensor a view reads, -1: not a view\n";
  s += view_offset + "};\n";
  s += "constexpr int kNumAbiTensors = " + std::to_string(n_abi) + ";\n";
  s += "constexpr int kNumScalars = " + std::to_string(p.scalars.size()) + ";\n";
  s += "constexpr int kNumStages = " + std::to_string(codes.size()) + ";\n\n";
  s += "size_t stage_workspace(int i) {\n  switch (i) {\n";
  for (size_t i = 0; i < codes.size(); ++i)
    s += "    case " + std::to_string(i) + ": return ucut_stage_workspace_" + std::to_string(i) + "();\n";
  s += "  }\n  return 0;\n}\n\n";
  s += "int stage_run(int i, const ucut_rt::StageArgs& a) {\n  switch (i) {\n";
  for (size_t i = 0; i < codes.size(); ++i)
    s += "    case " + std::to_string(i) + ": return ucut_stage_run_" + std::to_string(i) + "(a);\n";
  s += "  }\n  return 0;\n}\n\n";
  s += "const char* const kStageNames[] = {";
  for (const auto& st : p.stages) s += c_literal(st.name) + ", ";
  s += "\"\"};\n\n";
  s += R"RT(// Offsets of the tmp tensors and the largest stage workspace (stages run one after another,
// so they share one region after the tmp tensors).
struct Plan {
  size_t tmp_offset[kNumTensors + 1];
  size_t stage_ws_offset = 0;
  size_t stage_ws_bytes = 0;
  size_t total = 0;
};

const Plan& plan() {
  static const Plan p = [] {
    Plan q{};
    size_t off = 0;
    for (int i = 0; i < kNumTensors; ++i) {
      q.tmp_offset[i] = off;
      off += ucut_rt::round_up(kTmpBytes[i], 256);
    }
    q.stage_ws_offset = off;
    for (int i = 0; i < kNumStages; ++i) {
      size_t w = stage_workspace(i);
      if (w > q.stage_ws_bytes) q.stage_ws_bytes = w;
    }
    q.total = ucut_rt::round_up(off + q.stage_ws_bytes, 256);
    return q;
  }();
  return p;
}

}  // namespace

UCUT_EXPORT int ucut_abi_version(void) { return 1; }

UCUT_EXPORT const char* ucut_describe(void) {
  return )RT" + c_literal(describe_json(p, o, lib.config_names, unit_names)) + R"RT(;
}

UCUT_EXPORT const char* ucut_last_error(void) { return ucut_rt::error_buffer(); }
)RT" + (has_torch ? codegen_torch_host_header() + R"RT(
UCUT_EXPORT void ucut_set_host(int (*torch_stage)(void* ctx, int stage), void* ctx) {
  ucut_rt::host_fn() = torch_stage;
  ucut_rt::host_ctx() = ctx;
}
)RT" : std::string()) + R"RT(
UCUT_EXPORT int ucut_workspace_size(size_t* bytes) {
  if (bytes == nullptr) {
    ucut_rt::set_error("ucut_workspace_size: bytes is NULL");
    return 1;
  }
  *bytes = plan().total;
  return 0;
}

// ucut_run's body; with `events` (kNumStages + 1 of them) it records one before each stage and
// one after the last (ucut_run_timed).
static int run_stages(void* const* tensors, int n_tensors, const double* scalars, int n_scalars,
                      void* workspace, size_t workspace_bytes, void* stream, cudaEvent_t* events) {
  ucut_rt::error_buffer()[0] = '\0';
  if (n_tensors != kNumAbiTensors || (kNumAbiTensors > 0 && tensors == nullptr)) {
    ucut_rt::set_error("ucut_run: expected %d tensors, got %d", kNumAbiTensors, n_tensors);
    return 1;
  }
  if (n_scalars != kNumScalars || (kNumScalars > 0 && scalars == nullptr)) {
    ucut_rt::set_error("ucut_run: expected %d scalars, got %d", kNumScalars, n_scalars);
    return 1;
  }
  const Plan& pl = plan();
  if (workspace_bytes < pl.total || (pl.total > 0 && workspace == nullptr)) {
    ucut_rt::set_error("ucut_run: workspace of %zu bytes is too small; ucut_workspace_size says %zu",
                       workspace_bytes, pl.total);
    return 5;
  }
  void* all[kNumTensors + 1];
  for (int i = 0; i < kNumTensors; ++i) {
    if (kAbiIndex[i] < 0) {
      all[i] = static_cast<char*>(workspace) + pl.tmp_offset[i];
      continue;
    }
    void* t = tensors[kAbiIndex[i]];
    if (t == nullptr || (reinterpret_cast<uintptr_t>(t) % 16) != 0) {
      ucut_rt::set_error("ucut_run: tensor %d is %s (device pointers must be non-null and 16-byte aligned)",
                         kAbiIndex[i], t == nullptr ? "NULL" : "misaligned");
      return 1;
    }
    all[i] = t;
  }
  for (int i = 0; i < kNumTensors; ++i)  // views after every tensor they read (which is no view)
    if (kViewBase[i] >= 0) all[i] = static_cast<char*>(all[kViewBase[i]]) + kViewOffsetBytes[i];
  for (int s = 0; s < kNumStages; ++s) {
    ucut_rt::StageArgs a{all, scalars,
                         pl.stage_ws_bytes ? static_cast<char*>(workspace) + pl.stage_ws_offset : nullptr,
                         pl.stage_ws_bytes, static_cast<cudaStream_t>(stream)};
    if (events != nullptr && cudaEventRecord(events[s], static_cast<cudaStream_t>(stream)) != cudaSuccess) {
      ucut_rt::set_error("ucut_run_timed: cudaEventRecord before stage '%s' failed", kStageNames[s]);
      return 4;
    }
    int rc = stage_run(s, a);
    if (rc != 0) {
      char msg[2048];
      snprintf(msg, sizeof msg, "stage '%s': %s", kStageNames[s], ucut_rt::error_buffer());
      ucut_rt::set_error("%s", msg);
      return rc;
    }
  }
  if (events != nullptr && cudaEventRecord(events[kNumStages], static_cast<cudaStream_t>(stream)) != cudaSuccess) {
    ucut_rt::set_error("ucut_run_timed: cudaEventRecord after the last stage failed");
    return 4;
  }
  return 0;
}

UCUT_EXPORT int ucut_run(void* const* tensors, int n_tensors, const double* scalars, int n_scalars,
                         void* workspace, size_t workspace_bytes, void* stream) {
  return run_stages(tensors, n_tensors, scalars, n_scalars, workspace, workspace_bytes, stream, nullptr);
}

// ucut_run with a CUDA event before each stage and after the last: stage_ms[i] is stage i's
// elapsed time (docs/kernel-abi.md, "Per-stage times"). It synchronizes on its last event.
UCUT_EXPORT int ucut_run_timed(void* const* tensors, int n_tensors, const double* scalars, int n_scalars,
                               void* workspace, size_t workspace_bytes, void* stream, float* stage_ms,
                               int n_stage_ms) {
  if (stage_ms == nullptr || n_stage_ms < kNumStages) {
    ucut_rt::set_error("ucut_run_timed: stage_ms holds %d values, the program has %d stages", n_stage_ms,
                       kNumStages);
    return 1;
  }
  cudaEvent_t events[kNumStages + 1];
  int made = 0;
  for (; made <= kNumStages; ++made)
    if (cudaEventCreate(&events[made]) != cudaSuccess) break;
  int rc = made <= kNumStages ? 4 : 0;
  if (rc != 0) ucut_rt::set_error("ucut_run_timed: cudaEventCreate failed");
  if (rc == 0) rc = run_stages(tensors, n_tensors, scalars, n_scalars, workspace, workspace_bytes, stream, events);
  if (rc == 0) {
    const cudaError_t e = cudaEventSynchronize(events[kNumStages]);
    if (e != cudaSuccess) {
      ucut_rt::set_error("ucut_run_timed: the run failed on the GPU: %s", cudaGetErrorString(e));
      rc = 4;
    }
  }
  for (int s = 0; rc == 0 && s < kNumStages; ++s)
    if (cudaEventElapsedTime(&stage_ms[s], events[s], events[s + 1]) != cudaSuccess) {
      ucut_rt::set_error("ucut_run_timed: cudaEventElapsedTime of stage '%s' failed", kStageNames[s]);
      rc = 4;
    }
  for (int e = 0; e < made; ++e) cudaEventDestroy(events[e]);
  return rc;
}
)RT";
  if (!lib.units.empty())
    lib.units.push_back({"abi", banner("the C ABI unit and the stored units' bindings; the stages' code is in the other units") +
                                    codegen_runtime_header() + "\n" + abi_decls + "\n" + bindings +
                                    s.substr(abi_begin),
                         false, true});
  lib.source = std::move(s);
  return lib;
}

}  // namespace ucut::codegen
