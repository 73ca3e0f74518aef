// One SQLite transaction around a group of writes: the store holds all of them or none of them.
// Every store write of more than one statement goes through it (a measurement with its candidate,
// a memory record with its curation, a whole import, what one search learns), so an error or a
// killed process never leaves half of a change behind. Transactions nest (an inner one is a
// savepoint), so a write that is a transaction of its own can run inside a bigger one.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "support/result.h"

struct sqlite3;

namespace ucut::memory {

// Runs `body` in a transaction on `db` (the file at `path`, for messages): commits when it returns
// ok, rolls everything back when it returns an error (returned as is) or throws (rethrown).
Status sqlite_transaction(sqlite3* db, const std::string& path, const std::function<Status()>& body);

}  // namespace ucut::memory
