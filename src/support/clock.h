// Wall-clock time as the records write it.
#pragma once

#include <string>

namespace ucut {

// Now, in UTC, ISO 8601 to the second: "2026-12-04T07:58:12Z" (run records, the store's rows).
std::string utc_timestamp();

}  // namespace ucut
