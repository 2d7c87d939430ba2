// EntryKeys: the shape policy applied to a call's dynamic dims. Maps each dim's value to
// its key (exact, a bucket, symbolic), keeps the auto policy's history of values, and
// refines symbolic keys by duck sizing, so equal unnamed dims share one symbol.
#ifndef GRAPHJIT_COMPILER_ENTRIES_ENTRY_KEYS_H_
#define GRAPHJIT_COMPILER_ENTRIES_ENTRY_KEYS_H_

#include <string>
#include <vector>

#include "compiler/entries/guards.h"
#include "compiler/entries/policy.h"

namespace graphjit::compiler::entries {

class EntryKeys {
 public:
  explicit EntryKeys(const InputSignature& signature);  // `signature` must outlive this

  // The keys of a call with dynamic dims `values`. Updates the auto policy's history:
  // the dims that turn symbolic with this call are appended to `turned_dynamic`.
  DimKeys Observe(const DimValues& values, std::vector<int>* turned_dynamic);
  // The keys Observe would return, without touching the history (for ExplainMiss).
  DimKeys Peek(const DimValues& values) const;
  // Every dim exact: the keys of a call are its values (Observe returns a copy).
  bool keys_are_values() const { return keys_are_values_; }
  // `S=128,T=sym`: the named, symbolic or padded dims, or every dim when none is.
  std::string ToText(const DimKeys& keys) const;

 private:
  void DuckSize(const DimValues& values, DimKeys* keys) const;

  const InputSignature& signature_;
  std::vector<AutoDimState> auto_state_;
  // Every dim exact: a call's keys are its values (the common hit path, kept short).
  bool keys_are_values_ = true;
};

}  // namespace graphjit::compiler::entries

#endif  // GRAPHJIT_COMPILER_ENTRIES_ENTRY_KEYS_H_
