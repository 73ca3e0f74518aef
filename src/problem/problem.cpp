// Small helpers of the Problem IR types: dtype and kind names, numbers, sizes, lookups.
#include "problem/problem.h"

#include <limits>

#include "support/checked.h"
#include "support/diagnostics.h"

namespace ucut::problem {

namespace {

struct DTypeRow {
  DType type;
  const char* name;
  int bytes;
};

constexpr DTypeRow kDTypes[] = {
    {DType::f16, "f16", 2},  {DType::bf16, "bf16", 2}, {DType::f32, "f32", 4},
    {DType::f64, "f64", 8},  {DType::i8, "i8", 1},     {DType::i16, "i16", 2},
    {DType::i32, "i32", 4},  {DType::i64, "i64", 8},   {DType::u8, "u8", 1},
    {DType::boolean, "bool", 1},
};

struct KindRow {
  TensorKind kind;
  const char* name;
};

constexpr KindRow kKinds[] = {
    {TensorKind::input, "input"},         {TensorKind::parameter, "parameter"},
    {TensorKind::buffer, "buffer"},       {TensorKind::intermediate, "intermediate"},
    {TensorKind::output, "output"},       {TensorKind::constant, "constant"},
};

}  // namespace

std::optional<double> problem_number(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  if (!j.is_string()) return std::nullopt;
  const std::string& s = j.get_ref<const std::string&>();
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (s == "inf") return inf;
  if (s == "-inf") return -inf;
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  return std::nullopt;
}

const char* dtype_name(DType t) {
  for (const auto& row : kDTypes)
    if (row.type == t) return row.name;
  return "?";
}

std::optional<DType> dtype_from_name(const std::string& name) {
  for (const auto& row : kDTypes)
    if (name == row.name) return row.type;
  return std::nullopt;
}

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& row : kDTypes) v.emplace_back(row.name);
    return v;
  }();
  return names;
}

int dtype_bytes(DType t) {
  for (const auto& row : kDTypes)
    if (row.type == t) return row.bytes;
  return 4;
}

bool dtype_is_16bit_float(DType t) { return t == DType::f16 || t == DType::bf16; }

const char* tensor_kind_name(TensorKind k) {
  for (const auto& row : kKinds)
    if (row.kind == k) return row.name;
  return "?";
}

std::optional<TensorKind> tensor_kind_from_name(const std::string& name) {
  for (const auto& row : kKinds)
    if (name == row.name) return row.kind;
  return std::nullopt;
}

int64_t Tensor::numel() const {
  // problem_parse refuses a tensor beyond 2^62 bytes, so this cannot overflow for a loaded problem.
  auto n = checked_product(shape);
  UCUT_CHECK(n.has_value(), "element count of '" + name + "' overflows");
  return *n;
}

const Tensor* Problem::find_tensor(const std::string& n) const {
  for (const auto& t : tensors)
    if (t.name == n) return &t;
  return nullptr;
}

}  // namespace ucut::problem
