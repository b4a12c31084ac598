// What the two thin-input forward solvers share (TunaSmallCFwd: FP32 FMAs, any type;
// TunaSmallCTcFwd: tensor cores, FP16/BF16): both kernels compile the filter geometry, C/G and the
// layouts in, stage one input patch per output tile and take the other sizes and the strides as
// arguments. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuner_core/problem/problem.h"

namespace tuna::solver::small_c {

inline int64_t Cg(const Problem& p) { return p.c / p.groups; }
inline int64_t Kg(const Problem& p) { return p.k / p.groups; }
int64_t NextPow2(int64_t v);

// Rows x columns of the input patch a tile of tb_h x tb_w output pixels reads.
int64_t PatchRows(const Problem& p, int64_t tb_h);
int64_t PatchCols(const Problem& p, int64_t tb_w);

// Output tiles of tb_h x tb_w pixels over the N images (a kernel's pixel tiles, columns fastest).
int64_t PixelTiles(const Problem& p, int64_t tb_h, int64_t tb_w);

// y channels-last with every pixel's run of `width` channels aligned to `width` elements (vector
// stores of `width` channels).
bool VectorStores(const Problem& p, int64_t width);

// The -D options both kernels derive from the problem: TUNA_DTYPE, TUNA_CG, TUNA_FR, TUNA_FS,
// TUNA_SH, TUNA_SW, TUNA_DH, TUNA_DW, TUNA_PH, TUNA_PW, TUNA_NHWC (x channels-last),
// TUNA_Y_NHWC and TUNA_YVEC (`vector_stores`).
std::vector<std::string> GeometryOptions(const Problem& p, bool vector_stores);

}  // namespace tuna::solver::small_c
