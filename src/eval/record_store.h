// Saving RunRecords in the result store (memory/store.h): the candidate row (deduplicated), then
// one measurement row with the indexed columns and the whole record as JSON, in one transaction.
#pragma once

#include "eval/run_record.h"
#include "memory/store.h"

namespace ucut::eval {

Result<int64_t> record_save(memory::Store& store, int64_t run_id, const RunRecord& r);
// Every record of a run, parsed back.
Result<std::vector<RunRecord>> record_load_run(memory::Store& store, int64_t run_id);

}  // namespace ucut::eval
