// File helpers with Result errors that name the path: reading, atomic writing (write to a
// temporary then rename, so a killed run never leaves a half-written file), folders.
#pragma once

#include <string>

#include "support/result.h"

namespace ucut {

Result<std::string> fs_read(const std::string& path);
Status fs_write_atomic(const std::string& path, const std::string& content);
Status fs_mkdirs(const std::string& path);
bool fs_exists(const std::string& path);
// Keeps an existing file beside instead of overwriting it: "dir/attempts.jsonl" is renamed to the
// first free "dir/attempts.<n>.jsonl" (n = 1, 2, ...). Nothing to do when `path` does not exist.
Status fs_set_aside(const std::string& path);
// The user's data folder for ucutlass: $UCUTLASS_HOME, else $XDG_DATA_HOME/ucutlass, else
// ~/.local/share/ucutlass.
std::string fs_data_dir();
// The cache folder: $UCUTLASS_CACHE, else $XDG_CACHE_HOME/ucutlass, else ~/.cache/ucutlass.
std::string fs_cache_dir();

}  // namespace ucut
