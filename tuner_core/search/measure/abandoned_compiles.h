// Compiles a search started and no longer needs, left to end off the search's path.
//
// Why: on a GPU the tuner compiles batch k+1 of a search while batch k is timed (tuner.h). When
// the search then stops (patience, time limit, outclassed, budget), that batch is not needed,
// but its compiles (NVRTC cannot be interrupted) still run for a second or more. Waiting for
// them kept a worker's executor from its next job while the device had nothing to do (issue
// #19: 1.7 s per TunaIgemmFwd job that stopped at 32 of 48 candidates). Handed here instead,
// they end on their own threads while the executor goes on; their candidates not yet started
// are cancelled by the search first (Compiler::Compile's cancel flag).
//
// Bounds: at most `max_running` compiles are held; a further one first waits for the oldest
// (the time waited is returned, so the caller can account for it). The destructor waits for all
// of them, so whatever they use (the Compiler they run on and its Backend, the solver) must
// outlive this object: an executor declares it after its backend.
//
// Threads: one thread at a time (the one that runs the searches).
#pragma once

#include <cstddef>
#include <cstdint>
#include <future>
#include <vector>

#include "tuner_core/search/measure/compiler.h"

namespace tuna::search {

class AbandonedCompiles {
 public:
  explicit AbandonedCompiles(size_t max_running = 2) : max_running_(max_running < 1 ? 1 : max_running) {}
  ~AbandonedCompiles();
  AbandonedCompiles(const AbandonedCompiles&) = delete;
  AbandonedCompiles& operator=(const AbandonedCompiles&) = delete;

  // Takes a compile in flight (a std::async future; an invalid one is ignored). Returns the
  // milliseconds waited for older ones to make room (0 mostly).
  double Add(std::future<std::vector<CompiledCandidate>> compile);

  int64_t added() const { return added_; }  // compiles taken since construction
  size_t running() const;                   // of those, not ended yet

 private:
  size_t max_running_;
  std::vector<std::future<std::vector<CompiledCandidate>>> held_;  // oldest first
  int64_t added_ = 0;
};

}  // namespace tuna::search
