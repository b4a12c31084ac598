// Transposed convolutions (MIOpenDriver `-m trans`) in the form they are solved in.
//
// MIOpen has no transposed-convolution kernels: its API runs a transposed forward as the backward
// data of the convolution whose dy is the given x and whose dx is the given y, a transposed
// backward data as that convolution's forward, and transposed backward weights as its backward
// weights with x and dy swapped (src/convolution_api.cpp, Problem::MakeTransposed). The filter is
// the same tensor: (C, K/G, ...) of the transposed problem is (K', C'/G, ...) of the convolution.
// Its db keys are those of that convolution (keys.h files both under one key), so tuna stores,
// tunes, exports and runs a transposed problem as that convolution: every solver, kernel and
// reference sees convolution mode only.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/problem/problem.h"

namespace tuna {

// The convolution-mode problem that computes `p` (p itself in convolution mode): direction F and
// B swapped, W kept; c and k swapped; its input is p's output (extents Out(), p's output layout)
// and its output p's input. Its keys (FindDbKey, ToPerfDbConfig) equal p's. InvalidArgument when
// p is invalid or has no such convolution: an output padding of at least the stride (allowed
// below the dilation) gives the convolution more output rows than p has input rows.
absl::StatusOr<Problem> AsConvolution(const Problem& p);

// Every problem through AsConvolution (the first error is returned); `transposed`, when given, is
// set to how many were transposed.
absl::StatusOr<std::vector<Problem>> AsConvolutions(std::vector<Problem> problems, int* transposed = nullptr);

// Every problem of `file` through AsConvolution; a line whose problem has no convolution form
// moves to `file.errors` (its reason names the line's fields). Returns how many transposed
// problems were converted.
int ConvertTransposed(DriverFile& file);

}  // namespace tuna
