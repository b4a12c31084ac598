// tuna's tunable GPU solvers (ids 1001-1099, solver_sets.h). Ids are permanent: append only.
#include <memory>
#include <string>
#include <string_view>

#include "tuner_core/solver/conv/channel_pad_adapter.h"
#include "tuner_core/solver/conv/channel_order_adapter.h"
#include "tuner_core/solver/conv/depth_batch_adapter.h"
#include "tuner_core/solver/conv/flattening_solver.h"
#include "tuner_core/solver/conv/strided_adapter.h"

#include "tuner_core/solver/conv/gpu_depthwise.h"
#include "tuner_core/solver/conv/gpu_direct_tiled.h"
#include "tuner_core/solver/conv/gpu_fast_simt.h"
#include "tuner_core/solver/conv/gpu_fast_simt_wrw.h"
#include "tuner_core/solver/conv/gpu_fast_tc.h"
#include "tuner_core/solver/conv/gpu_hopper_fwd.h"
#include "tuner_core/solver/conv/gpu_hopper_halo.h"
#include "tuner_core/solver/conv/gpu_hopper_halo_wrw.h"
#include "tuner_core/solver/conv/gpu_hopper_tma.h"
#include "tuner_core/solver/conv/gpu_hopper_tma_wrw.h"
#include "tuner_core/solver/conv/gpu_hopper_wrw.h"
#include "tuner_core/solver/conv/gpu_igemm.h"
#include "tuner_core/solver/conv/gpu_mfma.h"
#include "tuner_core/solver/conv/gpu_small_c_fwd.h"
#include "tuner_core/solver/conv/gpu_small_c_tc_fwd.h"
#include "tuner_core/solver/conv/gpu_thin_bwd.h"
#include "tuner_core/solver/conv/gpu_winograd.h"
#include "tuner_core/solver/conv/gpu_winograd_wrw.h"
#include "tuner_core/solver/conv/solver_sets.h"

namespace tuna::solver {
namespace {

// `inner` under "<its name><suffix>" through `Adapter`, the inner solver flattening the 3-D
// problems that are 2-D ones (conv/flattening_solver.h).
template <typename Adapter>
std::unique_ptr<Solver> Adapted(std::string_view suffix, std::unique_ptr<Solver> inner) {
  std::string name = std::string(inner->Name()) + std::string(suffix);
  return std::make_unique<Adapter>(std::move(name), Flattening(std::move(inner)));
}
// NCHW / NCDHW (and mixed) problems on their channels-last form (NCDHW 1x3x3 layers: NDHWC copies
// run as 2-D problems of N*D images).
std::unique_ptr<Solver> Nchw(std::unique_ptr<Solver> inner) { return Adapted<ChannelsLastAdapter>("Nchw", std::move(inner)); }
// NHWC / NDHWC (and mixed) problems on a channels-first solver's NCHW / NCDHW form.
std::unique_ptr<Solver> Nhwc(std::unique_ptr<Solver> inner) { return Adapted<ChannelsFirstAdapter>("Nhwc", std::move(inner)); }
// A 2-D NCHW solver on NCDHW problems whose depth is an identity (N*D images).
std::unique_ptr<Solver> Ncdhw(std::unique_ptr<Solver> inner) { return Adapted<DepthBatchAdapter>("Ncdhw", std::move(inner)); }
// A channels-last solver on problems whose C/G or K/G is not whole 16-byte rows.
std::unique_ptr<Solver> Padded(std::unique_ptr<Solver> inner) { return Adapted<ChannelPadAdapter>("Pad", std::move(inner)); }
// A stride-1 solver on strided 1x1 (1x1x1) layers, on the lattice of x they read.
std::unique_ptr<Solver> Strided(std::unique_ptr<Solver> inner) { return Adapted<StridedAdapter>("Strided", std::move(inner)); }

// `S` built for forward, backward data and backward weights, ids first..first+2 in this order.
template <typename S>
void AddDirections(SolverList& list, uint64_t first) {
  const Direction directions[] = {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights};
  for (uint64_t i = 0; i < 3; ++i) list.emplace_back(first + i, std::make_unique<S>(directions[i]));
}

// The FP32 NCHW SIMT and Winograd solvers under `adapter`, ids first..first+5 in this order.
void AddSimtFamily(SolverList& list, uint64_t first, std::unique_ptr<Solver> (*adapter)(std::unique_ptr<Solver>)) {
  list.emplace_back(first, adapter(std::make_unique<FastSimtFwdSolver>()));
  list.emplace_back(first + 1, adapter(std::make_unique<FastSimtBwdSolver>()));
  list.emplace_back(first + 2, adapter(std::make_unique<FastSimtWrwSolver>()));
  list.emplace_back(first + 3, adapter(std::make_unique<WinogradF2x3Solver>()));
  list.emplace_back(first + 4, adapter(std::make_unique<WinogradWrwSolver>()));
  list.emplace_back(first + 5, adapter(std::make_unique<WinogradF4x3Solver>()));
}

}  // namespace

SolverList GpuTunableSolvers() {
  SolverList list;
  list.emplace_back(1001, std::make_unique<DirectTiledFwdSolver>());
  AddDirections<IgemmSolver>(list, 1002);  // TunaIgemm{Fwd,Bwd,Wrw}
  list.emplace_back(1010, std::make_unique<FastTcFwdSolver>());
  list.emplace_back(1011, std::make_unique<FastSimtFwdSolver>());
  list.emplace_back(1012, std::make_unique<HopperFwdSolver>());
  list.emplace_back(1013, std::make_unique<HopperTmaFwdSolver>());
  list.emplace_back(1014, std::make_unique<HopperTmaBwdSolver>());
  list.emplace_back(1015, std::make_unique<FastSimtBwdSolver>());
  list.emplace_back(1016, std::make_unique<FastSimtWrwSolver>());
  list.emplace_back(1017, std::make_unique<WinogradF2x3Solver>());
  list.emplace_back(1018, std::make_unique<WinogradWrwSolver>());
  list.emplace_back(1019, std::make_unique<HopperWrwSolver>());
  AddDirections<DepthwiseSolver>(list, 1020);  // TunaDepthwise{Fwd,Bwd,Wrw}
  list.emplace_back(1023, std::make_unique<ThinBwdSolver>());
  list.emplace_back(1024, std::make_unique<MfmaFwdSolver>());
  list.emplace_back(1025, std::make_unique<HopperTmaWrwSolver>());
  list.emplace_back(1026, std::make_unique<SmallCFwdSolver>());
  list.emplace_back(1027, std::make_unique<WinogradF4x3Solver>());
  list.emplace_back(1028, std::make_unique<SmallCTcFwdSolver>());
  list.emplace_back(1029, std::make_unique<HopperHaloFwdSolver>());
  list.emplace_back(1030, std::make_unique<HopperHaloWrwSolver>());  // a candidate until 2026-12-05
  // NCHW / NCDHW (and mixed) problems through the channels-last tensor-core solvers.
  list.emplace_back(1031, Nchw(std::make_unique<HopperTmaFwdSolver>()));
  list.emplace_back(1032, Nchw(std::make_unique<HopperTmaBwdSolver>()));
  list.emplace_back(1033, Nchw(std::make_unique<HopperTmaWrwSolver>()));
  list.emplace_back(1034, Nchw(std::make_unique<FastTcFwdSolver>()));
  list.emplace_back(1035, Nchw(std::make_unique<MfmaFwdSolver>()));
  list.emplace_back(1036, Nchw(std::make_unique<HopperWrwSolver>()));  // e.g. the RGB stem's backward weights
  list.emplace_back(1037, Nchw(std::make_unique<HopperHaloWrwSolver>()));
  list.emplace_back(1038, Nchw(std::make_unique<HopperFwdSolver>()));
  list.emplace_back(1039, Nchw(std::make_unique<HopperHaloFwdSolver>()));
  // 3-D convolutions on the TMA kernels (candidates until 2026-12-05: verified on the H100, faster
  // than TunaIgemm on every R3D-18 layer they take), NDHWC natively and NCDHW through the adapter.
  list.emplace_back(1040, std::make_unique<HopperTmaFwd3dSolver>());
  list.emplace_back(1041, std::make_unique<HopperTmaBwd3dSolver>());  // stride 1
  list.emplace_back(1042, std::make_unique<HopperTmaWrw3dSolver>());
  list.emplace_back(1049, Nchw(std::make_unique<HopperTmaFwd3dSolver>()));
  list.emplace_back(1050, Nchw(std::make_unique<HopperTmaBwd3dSolver>()));
  list.emplace_back(1051, Nchw(std::make_unique<HopperTmaWrw3dSolver>()));
  // The TMA forward on channels-last problems whose C/G or K/G is off 16-byte rows, the channels
  // padded by zeros into the workspace (conv/channel_pad_adapter.h; a candidate until 2026-12-05:
  // verified and fastest on R(2+1)D's C / K = 45, 230, 460, 921 layers on the H100).
  list.emplace_back(1052, Padded(std::make_unique<HopperTmaFwdSolver>()));
  // FP32 channels-last problems (NHWC; NDHWC 1xRxS layers flattened to NHWC images) on the SIMT
  // and Winograd solvers, which read NCHW only, through the channels-first adapter (NCHW copies;
  // before, TunaIgemm and TunaDirectTiledFwd were all these layouts had; candidates until
  // 2026-12-05: verified on the H100 and faster than those on every ResNet-50 layer).
  AddSimtFamily(list, 1055, Nhwc);  // TunaFastSimt{Fwd,Bwd,Wrw}Nhwc, TunaWinograd{F2x3,Wrw,F4x3}Nhwc
  // FP32 NCDHW layers whose depth is an identity (1xRxS) as 2-D problems of N*D images, x and y
  // permuted into the workspace (conv/depth_batch_adapter.h), and the TMA backward solvers with
  // channels padded (conv/channel_pad_adapter.h). Candidates until 2026-12-06: verified on the
  // H100 (gpu_channels_last_test: 71 runs, 0 failures) and each the fastest tuna solver on some
  // R(2+1)D-18 layers (Winograd F4x3 on the 1x3x3 layers 1.6-2.4x cuDNN best; the padded TMA
  // backward on the 230/460/921-channel layers, docs/BENCHMARKS.md).
  AddSimtFamily(list, 1043, Ncdhw);  // TunaFastSimt{Fwd,Bwd,Wrw}Ncdhw, TunaWinograd{F2x3,Wrw,F4x3}Ncdhw
  list.emplace_back(1053, Padded(std::make_unique<HopperTmaBwdSolver>()));
  list.emplace_back(1054, Padded(std::make_unique<HopperTmaWrwSolver>()));
  return list;
}

SolverList CandidateGpuSolvers() {
  SolverList list;
  // Strided 1x1x1 projections of 3-D networks (conv/strided_adapter.h): FP32 on the SIMT solvers,
  // FP16/BF16 channels-last backward data on the TMA kernel (the 3-D TMA solvers take the forward
  // and backward-weights projections already). Not yet run on a GPU.
  list.emplace_back(1061, Strided(std::make_unique<FastSimtFwdSolver>()));
  list.emplace_back(1062, Strided(std::make_unique<FastSimtBwdSolver>()));
  list.emplace_back(1063, Strided(std::make_unique<FastSimtWrwSolver>()));
  list.emplace_back(1064, Strided(std::make_unique<HopperTmaBwdSolver>()));
  return list;
}

}  // namespace tuna::solver
