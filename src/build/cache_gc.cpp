// The cache folder's disk use and its cleaning (see cache_gc.h).
#include "build/cache_gc.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace ucut::build {

namespace fs = std::filesystem;

namespace {

using Clock = fs::file_time_type::clock;

struct Entry {
  fs::path path;
  fs::file_time_type mtime;
  int64_t bytes = 0;
};

bool is_stale_name(const std::string& name) { return name.find(".building.") != std::string::npos; }

int64_t tree_bytes(const fs::path& p) {
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) {
    auto n = fs::file_size(p, ec);
    return ec ? 0 : static_cast<int64_t>(n);
  }
  int64_t total = 0;
  for (fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2)) {
      auto n = it->file_size(e2);
      if (!e2) total += static_cast<int64_t>(n);
    }
  }
  return total;
}

int64_t tree_files(const fs::path& p) {
  std::error_code ec;
  int64_t n = 0;
  for (fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2)) ++n;
  }
  return n;
}

// The entries of one area: files with `ext` directly in `dir` (ext empty: sub-folders), leaving
// out the files of builds in progress. `stale` collects those older than `stale_age`.
std::vector<Entry> area_entries(const fs::path& dir, const std::string& ext, std::vector<Entry>* stale,
                                std::chrono::seconds stale_age) {
  std::vector<Entry> out;
  std::error_code ec;
  const auto now = Clock::now();
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    const std::string name = it->path().filename().string();
    Entry e{it->path(), it->last_write_time(e2), 0};
    if (e2) continue;  // removed meanwhile
    if (ext.empty()) {
      if (!it->is_directory(e2)) continue;
      e.bytes = tree_bytes(it->path());
      out.push_back(std::move(e));
      continue;
    }
    if (!it->is_regular_file(e2)) continue;
    e.bytes = static_cast<int64_t>(it->file_size(e2));
    if (e2) continue;
    if (is_stale_name(name)) {
      if (stale && now - e.mtime > stale_age) stale->push_back(std::move(e));
      continue;
    }
    if (it->path().extension() == ext) out.push_back(std::move(e));
  }
  return out;
}

struct Scan {
  std::vector<Entry> libraries, objects, candidates, stale;
  int64_t baseline_files = 0, baseline_bytes = 0;
};

Scan scan(const std::string& root, std::chrono::seconds stale_age) {
  Scan s;
  const fs::path r(root);
  s.libraries = area_entries(r / "kernels", ".so", &s.stale, stale_age);
  s.objects = area_entries(r / "kernels" / "obj", ".o", &s.stale, stale_age);
  s.candidates = area_entries(r / "build", "", nullptr, stale_age);
  s.baseline_files = tree_files(r / "baselines");
  s.baseline_bytes = tree_bytes(r / "baselines");
  return s;
}

int64_t sum_bytes(const std::vector<Entry>& v) {
  int64_t n = 0;
  for (const auto& e : v) n += e.bytes;
  return n;
}

bool remove_entry(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
  return !ec;
}

}  // namespace

int64_t CacheUsage::total_bytes() const {
  int64_t n = 0;
  for (const auto& a : areas) n += a.bytes;
  return n + stale_bytes;
}

CacheUsage cache_usage(const std::string& root) {
  Scan s = scan(root, std::chrono::seconds(3600));
  CacheUsage u;
  u.root = root;
  u.areas = {{"libraries", root + "/kernels", static_cast<int64_t>(s.libraries.size()), sum_bytes(s.libraries)},
             {"objects", root + "/kernels/obj", static_cast<int64_t>(s.objects.size()), sum_bytes(s.objects)},
             {"candidates", root + "/build", static_cast<int64_t>(s.candidates.size()), sum_bytes(s.candidates)},
             {"baselines", root + "/baselines", s.baseline_files, s.baseline_bytes}};
  u.stale_files = static_cast<int64_t>(s.stale.size());
  u.stale_bytes = sum_bytes(s.stale);
  return u;
}

CacheCleanResult cache_clean(const std::string& root, const CacheCleanOptions& opts) {
  CacheCleanResult r;
  Scan s = scan(root, opts.stale_age);
  for (const auto& e : s.stale)
    if (remove_entry(e.path)) ++r.stale_removed;
  std::vector<Entry> entries;
  for (auto* v : {&s.libraries, &s.objects, &s.candidates}) entries.insert(entries.end(), v->begin(), v->end());
  int64_t total = sum_bytes(entries) + s.baseline_bytes;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.mtime < b.mtime; });
  const auto now = Clock::now();
  for (const auto& e : entries) {
    if (!opts.all) {
      if (opts.max_bytes < 0 || total <= opts.max_bytes) break;
      if (now - e.mtime < opts.min_age) {
        r.target_met = false;  // everything after this one is younger still
        break;
      }
    }
    if (!remove_entry(e.path)) continue;
    ++r.removed_entries;
    r.removed_bytes += e.bytes;
    total -= e.bytes;
  }
  if (!opts.all && opts.max_bytes >= 0 && total > opts.max_bytes) r.target_met = false;
  r.total_after = cache_usage(root).total_bytes();
  return r;
}

Result<int64_t> cache_parse_size(const std::string& text) {
  auto bad = [&] {
    return make_error(ErrorCode::invalid_input, "'" + text + "' is not a size",
                      "write a number with an optional unit: 20G, 512M, 800K, 1000 (bytes); 0 for no cap");
  };
  std::string t;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) t += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (t.size() > 2 && t.compare(t.size() - 2, 2, "IB") == 0) t.resize(t.size() - 2);
  else if (t.size() > 1 && t.back() == 'B') t.pop_back();
  if (t.empty()) return bad();
  double mult = 1;
  switch (t.back()) {
    case 'K': mult = 1024.0; break;
    case 'M': mult = 1024.0 * 1024; break;
    case 'G': mult = 1024.0 * 1024 * 1024; break;
    case 'T': mult = 1024.0 * 1024 * 1024 * 1024; break;
    default: break;
  }
  if (mult > 1) t.pop_back();
  if (t.empty()) return bad();
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (!end || *end || !std::isfinite(v) || v < 0 || v * mult > 9.0e18) return bad();
  return static_cast<int64_t>(std::llround(v * mult));
}

std::string cache_format_size(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f} GB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.0f} MB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:.0f} KB", b / 1024.0);
  return fmt::format("{} B", bytes);
}

Result<int64_t> cache_max_bytes() {
  const char* e = std::getenv("UCUTLASS_CACHE_MAX");
  if (!e || !*e) return int64_t{20} * 1024 * 1024 * 1024;
  auto v = cache_parse_size(e);
  if (!v) {
    Error err = v.error();
    err.message = "UCUTLASS_CACHE_MAX: " + err.message;
    return err;
  }
  return *v;
}

std::string cache_enforce_cap(const std::string& root) {
  auto cap = cache_max_bytes();
  if (!cap) return cap.error().render() + " (no cache cap applied)";
  if (*cap == 0) return "";
  if (cache_usage(root).total_bytes() <= *cap) return "";
  CacheCleanOptions o;
  o.max_bytes = *cap / 10 * 8;
  CacheCleanResult r = cache_clean(root, o);
  std::string line = fmt::format(
      "cache: removed {} least recently used entr{} ({}) to stay under its {} cap (UCUTLASS_CACHE_MAX); "
      "now {}",
      r.removed_entries, r.removed_entries == 1 ? "y" : "ies", cache_format_size(r.removed_bytes),
      cache_format_size(*cap), cache_format_size(r.total_after));
  if (!r.target_met) line += "; the rest was used within the hour and is kept";
  return line;
}

void cache_touch(const std::string& path) {
  std::error_code ec;
  fs::last_write_time(path, Clock::now(), ec);
}

}  // namespace ucut::build
