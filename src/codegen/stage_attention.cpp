// codegen_emit_attention: an attention stage as ucut_attn::attention_fwd_kernel (f16/bf16,
// mma.sync) or attention_f32_kernel (f32, 3xTF32) of runtime/attention.cuh, or, at 384 threads,
// attention_ws_kernel of runtime/attention_sm90.cuh (f16/bf16 on Hopper: wgmma, TMA, two consumer
// warpgroups; the same order bit for bit), one instantiation per dtype, head dims, block rows and
// mask. The scale enters as scale * log2(e) in fp32 the way each reference kernel forms it:
// rounded from double for 16-bit data (cuDNN), the product of fp32 scale and fp32 log2(e) for f32
// data (the memory-efficient kernel).
#include <fmt/format.h>

#include <cmath>

#include "codegen/simt_common.h"
#include "codegen/stage_emitter.h"
#include "dsl/names.h"

namespace ucut::codegen {

namespace {
constexpr int kKeysPerBlock = 128;    // the 16-bit reference's key blocks (runtime/attention.cuh)
constexpr int kKeysPerBlockF32 = 64;  // f32: any (the order within a block is what matters)
}

Result<StageCode> codegen_emit_attention(const dsl::Program& program, int stage_index) {
  const dsl::Stage& stage = simt_stage(program, stage_index);
  const auto* at = std::get_if<dsl::AttentionStage>(&stage.body);
  if (!at) return make_error(ErrorCode::internal, "codegen_emit_attention called on a non-attention stage");
  const std::string label = simt_stage_label(program, stage_index);
  const std::string pre = simt_prefix(stage_index);
  const dsl::Tensor* q = program.find_tensor(at->q);
  const dsl::Tensor* k = program.find_tensor(at->k);
  const dsl::Tensor* v = program.find_tensor(at->v);
  const dsl::Tensor* o = stage.outputs.empty() ? nullptr : program.find_tensor(stage.outputs[0]);
  if (!q || !k || !v || !o) return make_error(ErrorCode::invalid_input, label + ": unknown attention tensor");
  if (!simt_is_float(q->dtype))
    return make_error(ErrorCode::unsupported, label + ": attention runs on f16, bf16 or f32 data, not " +
                                                  std::string(simt_dtype_name(q->dtype)));
  const bool f32 = q->dtype == dsl::DType::f32;
  if (!dsl::dsl_attention_head_dim_ok(at->d, q->dtype) || !dsl::dsl_attention_head_dim_ok(at->dv, q->dtype))
    return make_error(ErrorCode::unsupported,
                      fmt::format("{}: head dims {} and {}; the kernel takes 64 and 128 (f32 also 96)", label, at->d,
                                  at->dv));
  const int threads = at->knobs.threads.value_or(dsl::dsl_attention_default_threads(q->dtype));
  if (!dsl::dsl_attention_threads_ok(threads, q->dtype))
    return make_error(ErrorCode::invalid_input,
                      fmt::format("{}: {} threads; attention takes 128, 256 or (16-bit data) 384", label, threads));
  const bool hopper = threads == dsl::kAttentionHopperThreads;
  const int rows = dsl::dsl_attention_rows(threads);
  const float scale_log2 = f32 ? static_cast<float>(at->scale) * 1.4426950408889634f
                              : static_cast<float>(static_cast<double>(static_cast<float>(at->scale)) * 1.4426950408889634);
  const int keys = f32 ? kKeysPerBlockF32 : kKeysPerBlock;

  StageCode code;
  code.includes = {hopper ? "attention_sm90.cuh" : "attention.cuh"};
  code.launcher = pre + "launch";
  code.workspace_expr = "0";
  code.needs_cutlass = false;
  code.config_name = fmt::format("attention_{}_d{}_dv{}_m{}_n{}{}{}", simt_dtype_name(q->dtype), at->d, at->dv, rows,
                                 keys, hopper ? "_ws" : "", at->causal ? "_causal" : "");  // (grouping: launch data)
  std::string d = simt_banner(program, stage_index, "attention");
  d += fmt::format("int {}(const ucut_rt::StageArgs& args) {{\n", code.launcher);
  d += "  ucut_attn::Params p{};\n";
  d += fmt::format("  p.q = args.tensors[{}];  // {}\n", simt_tensor_index(program, q->name), q->name);
  d += fmt::format("  p.k = args.tensors[{}];  // {}\n", simt_tensor_index(program, k->name), k->name);
  d += fmt::format("  p.v = args.tensors[{}];  // {}\n", simt_tensor_index(program, v->name), v->name);
  d += fmt::format("  p.o = args.tensors[{}];  // {}\n", simt_tensor_index(program, o->name), o->name);
  d += fmt::format("  p.lq = {}LL;\n  p.lk = {}LL;\n  p.batch = {}LL;\n", at->lq, at->lk, at->batch);
  if (at->kv_group > 1)  // grouped-query: query heads per key/value head
    d += fmt::format("  p.heads = {}LL;\n  p.kv_group = {}LL;\n", at->heads, at->kv_group);
  d += fmt::format("  p.scale_log2 = {:a}f;  // scale {} * log2(e)\n", scale_log2, at->scale);
  if (f32)
    d += fmt::format("  const int rc = ucut_attn::launch_attention_f32<{}, {}, {}, {}, {}>(p, args.stream);\n", rows,
                     keys, at->d, at->dv, at->causal ? "true" : "false");
  else if (hopper)
    d += fmt::format("  const int rc = ucut_attn::launch_attention_ws<{}, {}, {}, {}>(p, args.stream);\n",
                     simt_cuda_type(q->dtype), at->d, at->dv, at->causal ? "true" : "false");
  else
    d += fmt::format("  const int rc = ucut_attn::launch_attention<{}, {}, {}, {}, {}, {}>(p, args.stream);\n",
                     simt_cuda_type(q->dtype), rows, keys, at->d, at->dv, at->causal ? "true" : "false");
  d += fmt::format(
      "  if (rc == 2) {{\n    ucut_rt::set_error(\"{}: attention tensors must be 16-byte aligned\");\n    return 2;\n  }}\n",
      label);
  if (hopper)
    d += fmt::format(
        "  if (rc == 5) {{\n    ucut_rt::set_error(\"{}: no TMA tensor map for q, k or v (the driver lacks "
        "cuTensorMapEncodeTiled or refused the tensors); use threads 128\");\n    return 4;\n  }}\n",
        label);
  d += fmt::format(
      "  if (rc != 0) {{\n    ucut_rt::set_error(\"{}: the attention kernel's shared memory could not be raised\");\n"
      "    return 4;\n  }}\n",
      label);
  d += simt_launch_check(label);
  d += "  return 0;\n}\n";
  code.definitions = std::move(d);
  return code;
}

}  // namespace ucut::codegen
