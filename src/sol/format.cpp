// Human units for the SOL printers.
#include "sol/format.h"

#include <fmt/format.h>

#include <cmath>

namespace ucut::sol {

namespace {

std::string scaled(double v, const char* unit) {
  static const char* prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  int i = 0;
  double a = std::fabs(v);
  while (a >= 1000 && i < 6) {
    a /= 1000;
    v /= 1000;
    ++i;
  }
  if (i == 0) return fmt::format("{:.0f} {}", v, unit);
  return fmt::format("{:.{}f} {}{}", v, a >= 100 ? 1 : a >= 10 ? 2 : 3, prefixes[i], unit);
}

}  // namespace

std::string fmt_time(double s) {
  if (s <= 0) return "0 us";
  if (s < 1e-3) return fmt::format("{:.2f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

std::string fmt_bytes(double b) { return scaled(b, "B"); }
std::string fmt_flops(double f) { return scaled(f, "FLOP"); }
std::string fmt_rate(double r) { return scaled(r, "FLOP/s"); }
std::string fmt_bw(double b) { return scaled(b, "B/s"); }

}  // namespace ucut::sol
