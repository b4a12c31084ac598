// The solver sets that make up the builtin registry (builtin.cc). Each set lives in its own
// files under conv/ and returns (id, solver) pairs; ids are assigned here and nowhere else:
//   85, 86, 87   ConvDirectNaiveConv{Fwd,Bwd,Wrw}: every backend (MIOpen's names and ids)
//   1001-1099    tuna's tunable GPU solvers (CUDA and HIP); 1031-1039 are channels-last solvers
//                run on NCHW problems (<inner name>Nchw, conv/channel_order_adapter.h), 1040-1042
//                the 3-D TMA solvers, 1043-1048 2-D NCHW solvers run on NCDHW 1xRxS
//                problems (<inner name>Ncdhw, conv/depth_batch_adapter.h), 1049-1051 the 3-D TMA
//                solvers on NCDHW, 1052-1054 the TMA solvers with channels padded
//                (<inner name>Pad, conv/channel_pad_adapter.h), 1055-1060 NCHW solvers run on NHWC /
//                NDHWC problems (<inner name>Nhwc, conv/channel_order_adapter.h), 1061-1064
//                (candidates) stride-1 solvers on strided 1x1 layers (<inner name>Strided,
//                conv/strided_adapter.h)
//   2001-2099    tuna's tunable CPU solvers
// Candidates: GPU solvers written but not yet verified on a GPU. Never in the builtin registry
// (tune jobs, the runtime): bench/kernels times them with --candidates, and a candidate moves into
// GpuTunableSolvers, keeping its id, once it verifies and pays.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "tuner_core/solver/solver.h"

namespace tuna::solver {

using SolverList = std::vector<std::pair<uint64_t, std::unique_ptr<Solver>>>;

SolverList NaiveSolvers();      // conv/naive*.{h,cc}
SolverList GpuTunableSolvers();  // conv/gpu_*.{h,cc}
SolverList CpuTunableSolvers();  // conv/cpu_*.{h,cc}
SolverList CandidateGpuSolvers();  // conv/gpu_*.{h,cc}, ids reserved in 1001-1099

}  // namespace tuna::solver
