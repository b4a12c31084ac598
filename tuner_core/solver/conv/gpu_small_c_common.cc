#include "tuner_core/solver/conv/gpu_small_c_common.h"

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"

namespace tuna::solver::small_c {

int64_t NextPow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

int64_t PatchRows(const Problem& p, int64_t tb_h) { return (tb_h - 1) * p.stride[1] + (p.fil[1] - 1) * p.dilation[1] + 1; }
int64_t PatchCols(const Problem& p, int64_t tb_w) { return (tb_w - 1) * p.stride[2] + (p.fil[2] - 1) * p.dilation[2] + 1; }

int64_t PixelTiles(const Problem& p, int64_t tb_h, int64_t tb_w) {
  const Dhw o = p.Out();
  return p.n * gpu::CeilDiv(o[1], tb_h) * gpu::CeilDiv(o[2], tb_w);
}

bool VectorStores(const Problem& p, int64_t width) {
  const TensorDesc y = p.YDesc();
  return gpu::IsChannelsLast(p.out_layout) && y.strides[1] == 1 && Kg(p) % width == 0 && y.strides[0] % width == 0 &&
         y.strides[3] % width == 0 && y.strides[4] % width == 0;
}

std::vector<std::string> GeometryOptions(const Problem& p, bool vector_stores) {
  return {gpu::DTypeOption(p.data_type),
          absl::StrCat("-DTUNA_CG=", Cg(p)),
          absl::StrCat("-DTUNA_FR=", p.fil[1]),
          absl::StrCat("-DTUNA_FS=", p.fil[2]),
          absl::StrCat("-DTUNA_SH=", p.stride[1]),
          absl::StrCat("-DTUNA_SW=", p.stride[2]),
          absl::StrCat("-DTUNA_DH=", p.dilation[1]),
          absl::StrCat("-DTUNA_DW=", p.dilation[2]),
          absl::StrCat("-DTUNA_PH=", p.pad[1]),
          absl::StrCat("-DTUNA_PW=", p.pad[2]),
          absl::StrCat("-DTUNA_NHWC=", gpu::IsChannelsLast(p.in_layout) ? 1 : 0),
          absl::StrCat("-DTUNA_Y_NHWC=", gpu::IsChannelsLast(p.out_layout) ? 1 : 0),
          absl::StrCat("-DTUNA_YVEC=", vector_stores ? 1 : 0)};
}

}  // namespace tuna::solver::small_c
