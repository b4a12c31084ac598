// Times the CPU reference convolution on a ResNet-50 layer, per direction, and prints GFLOPS
// (2 * multiply-adds of the direct convolution / seconds, best of --reps runs).
//
//   bazel run //bench/reference:reference_bench -- --n 32 --threads 2
//
// Default layer: ResNet-50 conv3_x ("l2") 3x3: C=128, H=W=28, K=128, 3x3, pad 1, stride 1.
// Flags select batch, threads, type (fp32/fp16/bf16), layout and FP64 accumulation.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "tuner_core/problem/problem.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"

namespace {

using tuna::DataType;
using tuna::Direction;
using tuna::Problem;
namespace ref = tuna::reference;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"CPU reference convolution benchmark"};
  int64_t n = 32, c = 128, hw = 28, k = 128, fil = 3, pad = 1, stride = 1;
  int threads = 2, reps = 3;
  std::string type = "fp32", layout = "NCHW";
  bool fp64 = false;
  app.add_option("--n", n, "batch size");
  app.add_option("--c", c, "input channels");
  app.add_option("--hw", hw, "input height = width");
  app.add_option("--k", k, "output channels");
  app.add_option("--fil", fil, "filter height = width");
  app.add_option("--pad", pad, "padding");
  app.add_option("--stride", stride, "stride");
  app.add_option("--threads", threads, "reference threads (0 = all cores)");
  app.add_option("--reps", reps, "repetitions per direction (best is reported)");
  app.add_option("--type", type, "fp32 | fp16 | bf16")->check(CLI::IsMember({"fp32", "fp16", "bf16"}));
  app.add_option("--layout", layout, "NCHW | NHWC (all tensors)")->check(CLI::IsMember({"NCHW", "NHWC"}));
  app.add_flag("--fp64", fp64, "FP64 accumulation");
  CLI11_PARSE(app, argc, argv);

  Problem p;
  p.n = n, p.c = c, p.k = k;
  p.in = {1, hw, hw};
  p.fil = {1, fil, fil};
  p.pad = {0, pad, pad};
  p.stride = {1, stride, stride};
  p.data_type = type == "fp16" ? DataType::kFp16 : type == "bf16" ? DataType::kBf16 : DataType::kFp32;
  p.in_layout = p.fil_layout = p.out_layout =
      layout == "NHWC" ? tuna::Layout::kNHWC : tuna::Layout::kNCHW;
  if (absl::Status s = ref::CheckProblem(p); !s.ok()) {
    std::fprintf(stderr, "bad problem: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  const ref::ElementType et = ref::StorageType(p.data_type);
  const auto x = ref::RandomBuffer(et, p.XDesc().ElementCount(), 1);
  const auto w = ref::RandomBuffer(et, p.WDesc().ElementCount(), 2);
  const auto y = ref::RandomBuffer(et, p.YDesc().ElementCount(), 3);
  std::printf("layer: n=%ld c=%ld h=w=%ld k=%ld %ldx%ld pad=%ld stride=%ld %s %s%s, "
              "threads=%d, %.3f GFLOP per direction\n",
              long(n), long(c), long(hw), long(k), long(fil), long(fil), long(pad), long(stride),
              type.c_str(), layout.c_str(), fp64 ? " fp64-acc" : "", threads, p.Flops() * 1e-9);
  const ref::ConvOptions opts{.threads = threads,
                              .accumulation = fp64 ? ref::Accumulation::kFp64
                                                   : ref::Accumulation::kDefault};
  for (Direction dir :
       {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
    std::vector<std::byte> out(ref::OutputDesc(p, dir).ElementCount() *
                               ref::OutputElementSize(p, dir));
    Problem q = p;
    q.direction = dir;
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const absl::Status s = ref::RunConv(q, {x.data(), w.data(), y.data(), out.data()}, opts);
      const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!s.ok()) {
        std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
        return 1;
      }
      best = std::min(best, sec);
    }
    std::printf("%-3s %8.3f s  %7.2f GFLOPS\n", std::string(tuna::DirectionName(dir)).c_str(),
                best, p.Flops() / best * 1e-9);
  }
  return 0;
}
