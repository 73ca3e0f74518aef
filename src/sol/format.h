// Number formatting shared by the SOL printers: times, byte counts and rates in the units a
// reader expects ("0.214 ms", "67.1 MB", "494.7 TFLOP/s"), all decimal (1e6 B = 1 MB), matching
// the datasheets' GB/s.
#pragma once

#include <cstdint>
#include <string>

namespace ucut::sol {

std::string fmt_time(double seconds);     // "12.3 us", "0.214 ms", "1.52 s"
std::string fmt_bytes(double bytes);      // "512 B", "4.19 MB", "1.07 GB"
std::string fmt_flops(double flops);      // "137.4 GFLOP"
std::string fmt_rate(double flops_per_s); // "494.7 TFLOP/s"
std::string fmt_bw(double bytes_per_s);   // "4.80 TB/s"

}  // namespace ucut::sol
