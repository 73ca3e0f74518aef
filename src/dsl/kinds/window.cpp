// The language's entry for window stages: a sliding-window reduction (max / avg / adaptive avg
// pooling, a depthwise conv as a weighted sum) over the spatial dims of a channels-first tensor,
// with an elementwise epilogue (checker: check_window.cpp; rules: window_rules.h). The
// interpreter is the reference semantics: a direct loop in double precision over every output
// element and tap, PyTorch's definitions.
#include <cmath>
#include <limits>

#include "dsl/kinds/kinds.h"
#include "dsl/names.h"
#include "dsl/window_rules.h"

namespace ucut::dsl {

namespace {

const std::vector<std::string>& knobs() {
  static const std::vector<std::string> k = {"threads", "items_per_thread"};
  return k;
}

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

void print(std::string& out, const Stage& s) {
  const auto& w = std::get<WindowStage>(s.body);
  out += s.outputs[0] + " = window " + w.op + "(" + w.x;
  if (w.op != "adaptive_avg") {
    if (w.op == "sum") {
      out += ", weight=" + w.weight;
      if (!w.bias.empty()) out += ", bias=" + w.bias;
    } else {
      out += ", window=" + list_str(w.window);
    }
    std::vector<int64_t> pad = w.pad_lo;
    if (w.pad_hi != w.pad_lo) pad.insert(pad.end(), w.pad_hi.begin(), w.pad_hi.end());
    out += ", stride=" + list_str(w.stride) + ", padding=" + list_str(pad);
    if (w.op != "avg") out += ", dilation=" + list_str(w.dilation);
    if (w.ceil_mode) out += ", ceil_mode=true";
    if (w.op == "avg" && !w.count_include_pad) out += ", count_include_pad=false";
    if (w.op == "avg" && w.divisor > 0) out += ", divisor=" + std::to_string(w.divisor);
  }
  out += ") {\n";
  dsl_print_simt_knobs(out, w.knobs, "window");
  if (!w.epilogue.stmts.empty()) dsl_print_block(out, "epilogue", w.epilogue);
}

// The offset in a contiguous tensor of shape `ts` of output element `idx` of shape `os`,
// broadcasting `ts` numpy-style (right-aligned, size-1 dims).
int64_t broadcast_offset(const std::vector<int64_t>& os, const std::vector<int64_t>& ts, int64_t idx) {
  int64_t off = 0, stride = 1, rem = idx;
  for (size_t k = 0; k < os.size(); ++k) {
    const int64_t c = rem % os[os.size() - 1 - k];
    rem /= os[os.size() - 1 - k];
    if (k < ts.size()) {
      const int64_t te = ts[ts.size() - 1 - k];
      if (te != 1) off += c * stride;
      stride *= te;
    }
  }
  return off;
}

Status interpret(const Program& p, const Stage& st, InterpTensors& ts, const std::vector<double>& scalars) {
  const auto& w = std::get<WindowStage>(st.body);
  auto xi = ts.find(w.x);
  if (xi == ts.end()) return make_error(ErrorCode::invalid_input, "window stage '" + st.name + "': its input has no data");
  const std::vector<double>& x = xi->second;
  const std::vector<double>* wt = nullptr;
  const std::vector<double>* bias = nullptr;
  for (auto [name, dst] : {std::pair{&w.weight, &wt}, std::pair{&w.bias, &bias}}) {
    if (name->empty()) continue;
    auto it = ts.find(*name);
    if (it == ts.end())
      return make_error(ErrorCode::invalid_input, "window stage '" + st.name + "': '" + *name + "' has no data");
    *dst = &it->second;
  }
  const Tensor* out = p.find_tensor(st.outputs[0]);
  if (!out) return make_error(ErrorCode::invalid_input, "window stage '" + st.name + "': unknown output");
  const size_t r = static_cast<size_t>(w.rank);
  // sizes padded to three spatial dims (leading ones of size 1)
  int64_t in[3] = {1, 1, 1}, o[3] = {1, 1, 1}, k[3] = {1, 1, 1}, sd[3] = {1, 1, 1}, dl[3] = {1, 1, 1},
          lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  for (size_t i = 0; i < r; ++i) {
    const size_t j = 3 - r + i;
    in[j] = w.in_size[i], o[j] = w.out_size[i];
    if (w.op != "adaptive_avg")
      k[j] = w.window[i], sd[j] = w.stride[i], dl[j] = w.dilation[i], lo[j] = w.pad_lo[i], hi[j] = w.pad_hi[i];
  }
  std::map<std::string, const std::vector<double>*> loads;
  for (const auto& [name, v] : ts) loads[name] = &v;
  std::vector<double> y(static_cast<size_t>(out->numel()));
  const int64_t plane = in[0] * in[1] * in[2];
  int64_t at = 0;
  for (int64_t n = 0; n < w.batch; ++n)
    for (int64_t c = 0; c < w.out_channels; ++c)
      for (int64_t o0 = 0; o0 < o[0]; ++o0)
        for (int64_t o1 = 0; o1 < o[1]; ++o1)
          for (int64_t o2 = 0; o2 < o[2]; ++o2, ++at) {
            const int64_t oi[3] = {o0, o1, o2};
            const size_t xbase = static_cast<size_t>((n * w.channels + c / w.mult) * plane);
            // per dim: the taps [t0, t1) and the first input index and its step
            int64_t first[3], step[3], taps[3];
            double size = 1, inside = 1;  // avg's divisors: the padded window's size, the taps inside x
            for (int d = 0; d < 3; ++d) {
              if (w.op == "adaptive_avg") {
                first[d] = window_adaptive_start(oi[d], in[d], o[d]);
                taps[d] = window_adaptive_end(oi[d], in[d], o[d]) - first[d];
                step[d] = 1;
              } else {
                first[d] = oi[d] * sd[d] - lo[d];
                taps[d] = k[d];
                step[d] = dl[d];
                // avg (dilation 1): the window cut at the high padding's end, then at x's
                const int64_t end = std::min(first[d] + k[d], in[d] + hi[d]);
                size *= static_cast<double>(end - first[d]);
                inside *= static_cast<double>(std::min(end, in[d]) - std::max<int64_t>(first[d], 0));
              }
            }
            double acc = w.op == "max" ? -std::numeric_limits<double>::infinity() : 0;
            double count = 0;
            for (int64_t t0 = 0; t0 < taps[0]; ++t0) {
              const int64_t i0 = first[0] + t0 * step[0];
              if (i0 < 0 || i0 >= in[0]) continue;
              for (int64_t t1 = 0; t1 < taps[1]; ++t1) {
                const int64_t i1 = first[1] + t1 * step[1];
                if (i1 < 0 || i1 >= in[1]) continue;
                for (int64_t t2 = 0; t2 < taps[2]; ++t2) {
                  const int64_t i2 = first[2] + t2 * step[2];
                  if (i2 < 0 || i2 >= in[2]) continue;
                  const double v = x[xbase + static_cast<size_t>((i0 * in[1] + i1) * in[2] + i2)];
                  if (w.op == "max") {
                    if (v > acc || std::isnan(v)) acc = std::isnan(acc) ? acc : v;
                  } else if (w.op == "sum") {
                    acc += v * (*wt)[static_cast<size_t>(((c * k[0] + t0) * k[1] + t1) * k[2] + t2)];
                  } else {
                    acc += v;
                  }
                  count += 1;
                }
              }
            }
            if (w.op == "avg") acc /= w.divisor > 0 ? static_cast<double>(w.divisor) : w.count_include_pad ? size : inside;
            if (w.op == "adaptive_avg") acc /= count;
            if (bias) acc += (*bias)[static_cast<size_t>(c)];
            InterpLoad load = [&](const Expr& e) -> Result<double> {
              auto it = loads.find(e.name);
              const Tensor* td = p.find_tensor(e.name);
              if (e.kind != Expr::Kind::load || it == loads.end() || !td)
                return make_error(ErrorCode::invalid_input, "window epilogue: '" + e.name + "' has no data");
              const int64_t idx = broadcast_offset(out->shape, td->shape, at);
              if (idx >= static_cast<int64_t>(it->second->size()))
                return make_error(ErrorCode::invalid_input, "window epilogue: '" + e.name + "' is too short");
              return (*it->second)[static_cast<size_t>(idx)];
            };
            auto v = interp_epilogue(p, w.epilogue, acc, load, scalars);
            if (!v) return v.error();
            y[static_cast<size_t>(at)] = *v;
          }
  ts[st.outputs[0]] = std::move(y);
  return ok_status();
}

std::optional<Error> plan_refusal(const Stage& st, const TensorFinder&) {
  return dsl_plan_refusal_of(window_plan(std::get<WindowStage>(st.body)));
}

}  // namespace

extern const DslStageKind dsl_kind_window = {
    StageKind::window, knobs, true,
    &detail::Checker::check_window, print, interpret, plan_refusal,
};

}  // namespace ucut::dsl
