// The cache folder's disk use and its cleaning (see cache_gc.h).
#include "build/cache_gc.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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

struct TreeSize {
  int64_t files = 0, bytes = 0;
};

// The regular files under `p` (or `p` itself), one walk.
TreeSize tree_size(const fs::path& p) {
  TreeSize t;
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) {
    auto n = fs::file_size(p, ec);
    if (!ec) t = {1, static_cast<int64_t>(n)};
    return t;
  }
  for (fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (!it->is_regular_file(e2)) continue;
    auto n = it->file_size(e2);
    if (e2) continue;
    ++t.files;
    t.bytes += static_cast<int64_t>(n);
  }
  return t;
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
      e.bytes = tree_size(it->path()).bytes;
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
  std::vector<Entry> libraries, objects, store, pinned, candidates, stale;
  TreeSize baselines;
};

fs::path pin_path(const fs::path& object) {
  fs::path p = object;
  return p.replace_extension(".pin");
}

Scan scan(const std::string& root, std::chrono::seconds stale_age) {
  Scan s;
  const fs::path r(root);
  s.libraries = area_entries(r / "kernels", ".so", &s.stale, stale_age);
  s.objects = area_entries(r / "kernels" / "obj", ".o", &s.stale, stale_age);
  for (auto& e : area_entries(r / "kernels" / "stage", ".o", &s.stale, stale_age)) {
    std::error_code ec;
    (fs::exists(pin_path(e.path), ec) ? s.pinned : s.store).push_back(std::move(e));
  }
  s.candidates = area_entries(r / "build", "", nullptr, stale_age);
  s.baselines = tree_size(r / "baselines");
  return s;
}

int64_t sum_bytes(const std::vector<Entry>& v) {
  int64_t n = 0;
  for (const auto& e : v) n += e.bytes;
  return n;
}

int64_t scan_total(const Scan& s) {
  return sum_bytes(s.libraries) + sum_bytes(s.objects) + sum_bytes(s.store) + sum_bytes(s.pinned) +
         sum_bytes(s.candidates) + sum_bytes(s.stale) + s.baselines.bytes;
}

bool remove_entry(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
  return !ec;
}

// cache_clean on a scan already made: the bytes left are the scan's less what was removed.
CacheCleanResult clean_scanned(const Scan& s, const CacheCleanOptions& opts) {
  CacheCleanResult r;
  int64_t total = scan_total(s);
  for (const auto& e : s.stale)
    if (remove_entry(e.path)) {
      ++r.stale_removed;
      total -= e.bytes;
    }
  std::vector<Entry> entries;
  for (auto* v : {&s.libraries, &s.objects, &s.store, &s.candidates}) entries.insert(entries.end(), v->begin(), v->end());
  if (opts.all && opts.pinned) {
    for (const auto& e : s.pinned)
      if (remove_entry(e.path)) {
        remove_entry(pin_path(e.path));
        ++r.removed_entries;
        r.removed_bytes += e.bytes;
        total -= e.bytes;
      }
  }
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
  r.total_after = total;
  return r;
}

}  // namespace

int64_t CacheUsage::total_bytes() const {
  int64_t n = 0;
  for (const auto& a : areas) n += a.bytes;
  return n + stale_bytes;
}

CacheUsage cache_usage(const std::string& root) {
  Scan s = scan(root, CacheCleanOptions{}.stale_age);
  CacheUsage u;
  u.root = root;
  u.areas = {{"libraries", root + "/kernels", static_cast<int64_t>(s.libraries.size()), sum_bytes(s.libraries)},
             {"objects", root + "/kernels/obj", static_cast<int64_t>(s.objects.size()), sum_bytes(s.objects)},
             {"store", root + "/kernels/stage", static_cast<int64_t>(s.store.size() + s.pinned.size()),
              sum_bytes(s.store) + sum_bytes(s.pinned), static_cast<int64_t>(s.pinned.size())},
             {"candidates", root + "/build", static_cast<int64_t>(s.candidates.size()), sum_bytes(s.candidates)},
             {"baselines", root + "/baselines", s.baselines.files, s.baselines.bytes}};
  u.stale_files = static_cast<int64_t>(s.stale.size());
  u.stale_bytes = sum_bytes(s.stale);
  return u;
}

CacheCleanResult cache_clean(const std::string& root, const CacheCleanOptions& opts) {
  return clean_scanned(scan(root, opts.stale_age), opts);
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
  CacheCleanOptions o;
  const Scan s = scan(root, o.stale_age);
  if (scan_total(s) <= *cap) return "";
  o.max_bytes = *cap / 10 * 8;
  CacheCleanResult r = clean_scanned(s, o);
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

Status cache_pin(const std::string& object_path) {
  std::ofstream out(pin_path(object_path));
  if (!out) return make_error(ErrorCode::io, "cannot pin " + object_path + ": cannot write " + pin_path(object_path).string());
  return ok_status();
}

}  // namespace ucut::build
