#include "tuner_core/solver/conv/naive_args.h"

namespace tuna::solver {

std::vector<KernelArg> ConvGeometryArgs(const Problem& p) {
  std::vector<KernelArg> args;
  args.reserve(37);
  for (int64_t v : {p.n, p.c, p.k, p.groups}) args.push_back(KernelArg::I64(v));
  const Dhw out = p.Out();
  for (const Dhw& d : {p.in, p.fil, out, p.pad, p.stride, p.dilation}) {
    for (int64_t v : d) args.push_back(KernelArg::I64(v));
  }
  for (const TensorDesc& desc : {p.XDesc(), p.WDesc(), p.YDesc()}) {
    for (int64_t s : desc.strides) args.push_back(KernelArg::I64(s));
  }
  return args;
}

std::vector<KernelArg> ConvBufferArgs() {
  return {KernelArg::Buffer(BufferRole::kX), KernelArg::Buffer(BufferRole::kW),
          KernelArg::Buffer(BufferRole::kY)};
}

std::string DataTypeDefine(DataType t) {
  switch (t) {
    case DataType::kFp32: return "-DTUNA_DTYPE_FP32";
    case DataType::kFp16: return "-DTUNA_DTYPE_FP16";
    case DataType::kBf16: return "-DTUNA_DTYPE_BF16";
    case DataType::kInt8: return "-DTUNA_DTYPE_INT8";
  }
  return "-DTUNA_DTYPE_FP32";
}

int64_t WrittenElementCount(const Problem& p, Direction direction) {
  switch (direction) {
    case Direction::kForward: return p.YDesc().ElementCount();
    case Direction::kBackwardData: return p.XDesc().ElementCount();
    case Direction::kBackwardWeights: return p.WDesc().ElementCount();
  }
  return 0;
}

}  // namespace tuna::solver
