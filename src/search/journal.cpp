#include "search/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "support/fs.h"

namespace ucut::search {

namespace {
std::string baselines_line(const Baselines& b) {
  return nlohmann::json{{"kind", "baselines"}, {"eager_s", b.eager_s}, {"compile_s", b.compile_s}}
             .dump() + "\n";
}
std::string attempt_line(const Attempt& a) {
  nlohmann::json j = attempt_to_json(a);
  j["kind"] = "attempt";
  return j.dump() + "\n";
}
}  // namespace

JournalContents journal_parse(const std::string& text) {
  JournalContents out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      ++out.torn_lines;
      continue;
    }
    if (j.value("kind", "") == "baselines")
      out.baselines = Baselines{j.value("eager_s", 0.0), j.value("compile_s", 0.0)};
    else if (j.value("kind", "") == "attempt")
      out.attempts.push_back(attempt_from_json(j));
  }
  return out;
}

Status FileJournal::append(const std::string& line) {
  auto parent = std::filesystem::path(path_).parent_path();
  if (!parent.empty()) {
    if (auto s = fs_mkdirs(parent.string()); !s) return s;
  }
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return make_error(ErrorCode::io, path_ + ": cannot open the journal: " + std::strerror(errno),
                      "check that the --out folder is writable");
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      return make_error(ErrorCode::io, path_ + ": writing the journal failed: " + std::strerror(e));
    }
    done += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  return ok_status();
}

Status FileJournal::record_baselines(const Baselines& b) { return append(baselines_line(b)); }
Status FileJournal::record(const Attempt& a) { return append(attempt_line(a)); }

Result<JournalContents> FileJournal::load() {
  if (!fs_exists(path_)) return JournalContents{};
  auto text = fs_read(path_);
  if (!text) return text.error();
  return journal_parse(*text);
}

Status MemoryJournal::record_baselines(const Baselines& b) {
  text += baselines_line(b);
  return ok_status();
}
Status MemoryJournal::record(const Attempt& a) {
  text += attempt_line(a);
  return ok_status();
}
Result<JournalContents> MemoryJournal::load() { return journal_parse(text); }

}  // namespace ucut::search
