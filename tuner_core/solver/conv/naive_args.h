// Kernel arguments and options shared by the naive solvers (naive_solvers.h) and the CPU GEMM
// solver (cpu_gemm_solver.h): their kernels take the same 37 geometry integers
// (kernels/conv/naive_conv_geom.h, TUNA_CONV_GEOM_PARAMS); the CPU kernels the same -DTUNA_DTYPE_* option.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuner_core/problem/problem.h"
#include "tuner_core/solver/solution.h"

namespace tuna::solver {

// n, c, k, groups, in[3], fil[3], out[3], pad[3], stride[3], dilation[3], then the element
// strides of XDesc(), WDesc(), YDesc(): 37 I64 arguments (64-bit indexing throughout).
std::vector<KernelArg> ConvGeometryArgs(const Problem& p);

// The x, w, y buffer arguments every conv kernel of this family starts with.
std::vector<KernelArg> ConvBufferArgs();

// "-DTUNA_DTYPE_FP32", "-DTUNA_DTYPE_FP16", "-DTUNA_DTYPE_BF16", "-DTUNA_DTYPE_INT8".
std::string DataTypeDefine(DataType t);

// Elements of the tensor `direction` writes (y, x or w).
int64_t WrittenElementCount(const Problem& p, Direction direction);

}  // namespace tuna::solver
