// The hardware table rows (hardware.def) and name lookup.
#include "sol/hardware.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "support/diagnostics.h"

namespace ucut::sol {

namespace {

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string normalize(const std::string& s) {
  std::string out;
  for (char c : s) {
    char l = char(std::tolower(static_cast<unsigned char>(c)));
    out += (l == ' ' || l == '_') ? '-' : l;
  }
  return out;
}

}  // namespace

const std::vector<HwSpec>& hw_table() {
  static const std::vector<HwSpec> table = {
#define UCUT_GPU(id, name, aliases, arch, sms, mhz, fp32, tf32, bf16, fp8, gbps, mem_gb, l2_mb, smem_kb, source) \
  HwSpec{name, split_words(aliases), arch, sms, mhz, (fp32) * 1e12, (tf32) * 1e12, (bf16) * 1e12,                  \
         (fp8) * 1e12, (gbps) * 1e9, (mem_gb) * 1e9, (l2_mb) * 1024.0 * 1024.0, (smem_kb) * 1024.0, source},
#include "sol/hardware.def"
#undef UCUT_GPU
  };
  return table;
}

Result<HwSpec> hw_lookup(const std::string& name) {
  std::string key = normalize(name);
  std::vector<std::string> all;
  for (const auto& hw : hw_table()) {
    if (hw.name == key) return hw;
    for (const auto& a : hw.aliases)
      if (a == key) return hw;
    all.push_back(hw.name);
  }
  std::string guess = diag_closest(key, all);
  std::string list;
  for (const auto& n : all) list += (list.empty() ? "" : ", ") + n;
  return make_error(ErrorCode::not_found, "unknown GPU '" + name + "'" +
                                              (guess.empty() ? "" : "; did you mean '" + guess + "'?"),
                    "known GPUs: " + list);
}

std::string hw_match_device(const std::string& device_name) {
  std::string d = normalize(device_name);
  auto has = [&](const char* s) { return d.find(s) != std::string::npos; };
  if (has("h200")) return "h200";
  if (has("b200")) return "b200";
  if (has("h100") && has("nvl")) return "";  // H100 NVL (94 GB, 3.9 TB/s) has no row yet
  if (has("h100")) return has("pcie") ? "h100-pcie" : "h100-sxm";
  if (has("a100")) return "a100-sxm-80gb";
  if (has("l40s")) return "l40s";
  if (has("4090")) return "rtx-4090";
  return "";
}

}  // namespace ucut::sol
