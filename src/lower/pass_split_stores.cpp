// pass_split_stores: a stage stores one main output, so a draft whose computed values are needed
// by more than one later reader is split: fused ops move, from the end, into a new elementwise
// draft right after it until the draft stores at most one value; the new draft reads the stored
// one as a tensor and is split again if it must. (linear -> relu -> [used twice] keeps relu in
// the GEMM epilogue and moves the readers out.)
// Runs after pass_row_reductions. Golden test: tests/golden/lower/split_two_uses.json.
#include "lower/passes.h"

namespace ucut::lower {

Status pass_split_stores(LowerState& s) {
  for (size_t j = 0; j < s.drafts.size(); ++j) {
    if (s.drafts[j].kind == DraftKind::convert || s.drafts[j].kind == DraftKind::torch) continue;  // torch: any number
    Draft moved;
    moved.kind = DraftKind::elementwise;
    while (draft_escaping(s, s.drafts[j]).size() > 1 && !s.drafts[j].ops.empty()) {
      moved.ops.insert(moved.ops.begin(), s.drafts[j].ops.back());
      s.drafts[j].ops.pop_back();
    }
    if (draft_escaping(s, s.drafts[j]).size() > 1) {
      int id = s.drafts[j].anchor >= 0 ? s.drafts[j].anchor : s.drafts[j].ops.front();
      return s.unsupported(id, "its result is needed in more than one form and a stage stores one output");
    }
    if (!moved.ops.empty()) {
      s.notes.push_back("split after " + s.op_label(s.drafts[j].ops.empty() ? s.drafts[j].anchor : s.drafts[j].ops.back()) +
                        ": its value is read by more than one later op, so it is stored and " +
                        s.op_label(moved.ops.front()) + " starts a new stage");
      s.drafts.insert(s.drafts.begin() + static_cast<std::ptrdiff_t>(j) + 1, std::move(moved));
    }
  }
  return ok_status();
}

}  // namespace ucut::lower
