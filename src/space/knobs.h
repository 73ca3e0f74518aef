// The knobs of the search space as typed data: one enum, one table row per knob giving its id,
// the short name used in compact listings and the DSL spelling (the knob line in a stage), so
// names cannot drift between the space, the printer and the reports. The values a knob takes
// are enumerated in enumerate.cpp; what makes a value legal lives in validate.cpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ucut::space {

enum class Knob {
  precision,
  tile,
  cluster,
  stages,
  schedule,
  scheduler,
  split_k,
  raster,
  swizzle,
  threads,
  rows_per_block,
  vector_width,
};

enum class KnobFamily { gemm, simt };

struct KnobInfo {
  Knob id;
  const char* short_name;  // "t", "c", ... in compact listings
  const char* dsl;         // the knob word in a stage: "tile", "cluster", ...
  KnobFamily family;
  const char* meaning;
};

const std::vector<KnobInfo>& space_knobs();
const KnobInfo& space_knob(Knob k);
std::optional<Knob> space_knob_parse(const std::string& dsl_name);

}  // namespace ucut::space
