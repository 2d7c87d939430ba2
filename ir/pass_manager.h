// PassManager<State>: the one driver of every list of named steps in graphjit - the graph
// passes (compiler/passes/pipeline.h), lowering's steps (compiler/lower/lower.h) and the
// back end's (compiler/compiled/back_end.h). It runs the steps in order, times each,
// runs a verifier after every step that changed the state (so a bug is caught by the
// step that made it, with its name), and prints the state after chosen steps. Header
// only: the state is the client's type, so this layer knows nothing of it.
#ifndef GRAPHJIT_IR_PASS_MANAGER_H_
#define GRAPHJIT_IR_PASS_MANAGER_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/clock.h"

namespace graphjit::ir {

// One step of one run: its name, wall seconds, whether it changed the state, and the
// client's counts of the state before and after it (PassManager::set_counter; nodes for
// a graph, kernels for a program).
struct StepStats {
  std::string name;
  double seconds = 0;
  bool changed = false;
  std::vector<int64_t> before, after;
};

// The words a manager's messages use for what it runs: a "pass" of "the pipeline", a
// "lowering step" of "this lowering", a "back-end step" of "the back end".
struct StepWords {
  std::string step = "step";
  std::string list = "the list";
  std::string verifier = "verifier";
  // Whether a step's error is prefixed with "<step> <name>: " (off where the steps name
  // the thing that failed themselves, as lowering's name the node).
  bool prefix_errors = true;
};

template <typename State>
class PassManager {
 public:
  // Rewrites the state in place; says whether it changed anything (a step that returns
  // false promises the state is as the last verification saw it).
  using StepFn = std::function<absl::StatusOr<bool>(State&)>;
  using Verifier = std::function<absl::Status(const State&)>;
  using Printer = std::function<void(const std::string& step, const State&)>;
  using Counter = std::function<std::vector<int64_t>(const State&)>;
  struct Step {
    std::string name;
    StepFn run;
  };

  explicit PassManager(StepWords words = {}) : words_(std::move(words)) {}

  PassManager& Add(std::string name, StepFn run) {
    steps_.push_back({std::move(name), std::move(run)});
    return *this;
  }
  // Run after every step that changed the state; a failure is an internal error naming
  // the step (the input was accepted, so the compiler broke it).
  void set_verifier(Verifier verifier) { verifier_ = std::move(verifier); }
  void set_verify(bool verify) { verify_ = verify; }
  void set_counter(Counter counter) { counter_ = std::move(counter); }

  // Calls `sink(step, state)` after each step in `names` ("*" means every step).
  // InvalidArgument naming the valid steps if a name is not one of them.
  absl::Status SetPrintAfter(const std::vector<std::string>& names, Printer sink) {
    const std::vector<std::string> known = this->names();
    for (const std::string& name : names) {
      if (name == "*") {
        print_all_ = true;
      } else if (std::find(known.begin(), known.end(), name) == known.end()) {
        return absl::InvalidArgumentError(absl::StrCat("--print-after: no ", words_.step, " '",
                                                       name, "' in ", words_.list, " (",
                                                       absl::StrJoin(known, ", "), ")"));
      } else {
        print_after_.push_back(name);
      }
    }
    sink_ = std::move(sink);
    return absl::OkStatus();
  }

  // Runs the steps in order. A step's error comes back with its code, prefixed with the
  // step's name (StepWords::prefix_errors); a verifier failure after a step is Internal, naming the
  // step.
  absl::Status Run(State& state) {
    stats_.clear();
    for (const Step& step : steps_) {
      StepStats s;
      s.name = step.name;
      if (counter_) s.before = counter_(state);
      const Clock::time_point start = Clock::now();
      absl::StatusOr<bool> changed = step.run(state);
      s.seconds = SecondsSince(start);
      if (!changed.ok()) {
        if (!words_.prefix_errors) return changed.status();
        return absl::Status(changed.status().code(), absl::StrCat(words_.step, " ", step.name, ": ",
                                                                  changed.status().message()));
      }
      s.changed = *changed;
      if (verify_ && verifier_ && s.changed) {
        if (absl::Status v = verifier_(state); !v.ok()) {
          return absl::InternalError(absl::StrCat(words_.verifier, " failed after ", words_.step,
                                                  " ", step.name, ": ", v.message()));
        }
      }
      if (counter_) s.after = counter_(state);
      stats_.push_back(std::move(s));
      if (sink_ && (print_all_ || std::find(print_after_.begin(), print_after_.end(), step.name) !=
                                      print_after_.end())) {
        sink_(step.name, state);
      }
    }
    return absl::OkStatus();
  }

  const std::vector<StepStats>& stats() const { return stats_; }
  std::vector<std::string> names() const {
    std::vector<std::string> names;
    for (const Step& s : steps_) names.push_back(s.name);
    return names;
  }

 private:
  StepWords words_;
  std::vector<Step> steps_;
  Verifier verifier_;
  bool verify_ = true;
  Counter counter_;
  bool print_all_ = false;
  std::vector<std::string> print_after_;
  Printer sink_;
  std::vector<StepStats> stats_;
};

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_PASS_MANAGER_H_
