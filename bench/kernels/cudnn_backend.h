// cuDNN at its best, through the backend (graph) API of cuDNN 9, dlopen'ed like cudnn_shim.h:
// one convolution problem becomes a one-operation graph (CONVOLUTION_FORWARD, _BACKWARD_DATA
// or _BACKWARD_FILTER); the engine configs that heuristics modes A, B and FALLBACK return (and
// optionally every engine with default knobs) are collected (deduplicated by engine and knob choices) and each one whose execution plan
// finalizes for the problem becomes a candidate. The caller times the candidates and keeps the
// fastest verified one ("cuDNN best").
//
// Numerics: compute type FP32 for every data type. FP32 data never runs on tensor cores (an
// engine noted CUDNN_NUMERICAL_NOTE_TENSOR_CORE with FP32 data is TF32: skipped, as PyTorch
// does with allow_tf32=False); engines noted DOWN_CONVERT_INPUTS are skipped for every type.
//
// No cuDNN headers are needed: the few enum values used are declared in cudnn_backend.cc with
// the numbers of cudnn_graph.h (cuDNN 9; part of its stable ABI).
//
// Threads: one CudnnBackendConv per thread; it uses the calling thread's current CUDA context
// and the legacy default stream (the one tuna's CUDA backend launches and records events on).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/problem/problem.h"

namespace tuna::bench {

class CudnnBackendLib;

// One finalized execution plan.
struct CudnnPlan {
  std::string name;          // "eng12 k2=3,k11=0 notes=TC,RPR (A)": engine, knobs, notes, modes
  int64_t engine = -1;       // global engine index
  size_t workspace_bytes = 0;
  void* plan = nullptr;      // the execution plan descriptor (owned by CudnnBackendConv)
};

struct CudnnPlanStats {
  int heuristic_configs = 0;  // returned by A + B + FALLBACK, before deduplication
  int distinct = 0;           // after deduplication
  int skipped_numerics = 0;   // TF32 for FP32 data, or down-converted inputs
  int skipped_workspace = 0;  // needs more than the caller's workspace
  int unsupported = 0;        // plan finalization refused the problem
  int all_engine_configs = 0; // engines that took the graph (all_engines), default knobs
  std::string mode_errors;    // heuristic modes that failed, with cuDNN's message
  std::string skipped_engines;  // "eng7(TC) eng12(TC,DOWNCVT)": the engines skipped for numerics
};

class CudnnBackendConv {
 public:
  ~CudnnBackendConv();
  CudnnBackendConv(const CudnnBackendConv&) = delete;
  CudnnBackendConv& operator=(const CudnnBackendConv&) = delete;

  // `path`: libcudnn.so.9 or its directory (empty: the loader's search path). Unavailable when
  // cuDNN cannot be loaded or lacks the backend API; Unimplemented for non-2D problems;
  // Internal when building the graph fails.
  static absl::StatusOr<std::unique_ptr<CudnnBackendConv>> Create(const std::string& path, const Problem& p);

  // Collects the candidate plans (see the file comment) whose workspace fits in
  // `max_workspace_bytes`. With `all_engines`, every engine that accepts the graph (global
  // indices 0 .. OPERATIONGRAPH_ENGINE_GLOBAL_COUNT-1) with its default knobs is added too, under
  // the same numerics rules (heuristics do not return every engine). NotFound when no engine
  // config supports the problem.
  absl::Status BuildPlans(size_t max_workspace_bytes, bool all_engines);
  const std::vector<CudnnPlan>& plans() const { return plans_; }
  const CudnnPlanStats& stats() const { return stats_; }

  // Binds the device addresses of x, w, y and the workspace (a variant pack); call once
  // before Execute and again whenever a buffer moves.
  absl::Status Bind(uint64_t x, uint64_t w, uint64_t y, uint64_t workspace);
  // Queues plans()[i] on the default stream (asynchronous). Requires Bind.
  absl::Status Execute(size_t i);

  std::string version() const;
  // The file the cuDNN library was loaded from (dladdr), "" when unknown.
  std::string library_path() const;

 private:
  CudnnBackendConv() = default;
  absl::Status BuildGraph();
  const CudnnBackendLib* lib_ = nullptr;
  Problem p_;
  void* handle_ = nullptr;
  std::vector<void*> owned_;  // descriptors destroyed in reverse order
  void* graph_ = nullptr;
  void* variant_pack_ = nullptr;
  std::vector<CudnnPlan> plans_;
  CudnnPlanStats stats_;
};

}  // namespace tuna::bench
