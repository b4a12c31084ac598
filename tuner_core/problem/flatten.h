// 3-D problems that are 2-D problems on the same bytes.
//
// A spatial dimension is an identity when the filter has one tap there, no padding and stride 1
// (its dilation then means nothing): the output keeps the input's extent and every output element
// reads only its own position along it. Such a dimension can be merged with a neighbour without
// moving a byte, so a 3-D problem with identity dimensions is often a 2-D problem that every 2-D
// solver runs as it is (R(2+1)D's 1x3x3 and 3x1x1 layers, 1x1x1 layers of I3D, SlowFast, X3D):
//   (H, W) identities      2-D (D, H*W): the depth's filter, padding, stride and dilation become the
//                          height's; any layout of each tensor (NCDHW -> NCHW, NDHWC -> NHWC);
//   D identity, x and y    2-D (H, W) with N*D images: image (n, d) starts where depth slice d of
//     channels-last (or   image n does (the filter, one depth tap, has the same bytes in NCHW / NHWC);
//     one frame, D = 1)    with one frame, NCDHW is NCHW as well;
//   (D, H) identities      2-D (D*H, W); any layouts.
// The first rule that applies is taken. Convolution mode only (transposed problems are solved as
// convolutions first, transpose.h); data type, groups, direction and pad mode are kept (the pad mode
// normalised again, problem.h). The result has the same element count per tensor and the same
// element order, so a solution of it, run on p's buffers, computes p.
#pragma once

#include <optional>

#include "tuner_core/problem/problem.h"

namespace tuna {

// The 2-D problem on p's bytes, or nullopt where p is not 3-D, not convolution mode, has no
// rule above that applies, or the result is not a valid problem (an extent past the limits).
std::optional<Problem> FlattenTo2d(const Problem& p);

// A 3-D convolution-mode problem whose depth is an identity as the 2-D problem of N*D images of
// H x W, each tensor's layout its 2-D counterpart (nullopt otherwise, or where the result is not a
// valid problem). On p's bytes where x and y are channels-last or D = 1 (FlattenTo2d's second rule); a
// channels-first x or y must first be permuted from (N, C, D, H, W) to (N, D, C, H, W) (the
// depth-as-batch adapters, solver/conv/depth_batch_adapter.h). The filter, one depth tap, is the
// same bytes in either case.
std::optional<Problem> DepthAsBatch(const Problem& p);

}  // namespace tuna
