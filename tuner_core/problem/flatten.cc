#include "tuner_core/problem/flatten.h"

#include "tuner_core/problem/validate.h"

namespace tuna {
namespace {

bool Identity(const Problem& p, int i) { return p.fil[i] == 1 && p.pad[i] == 0 && p.stride[i] == 1; }
Layout TwoD(Layout l) { return IsChannelsLast(l) ? Layout::kNHWC : Layout::kNCHW; }

// The 2-D problem with p's tensors' layouts, everything else of p but the spatial fields.
Problem Base(const Problem& p) {
  Problem q = p;
  q.spatial_dims = 2;
  q.in_layout = TwoD(p.in_layout), q.fil_layout = TwoD(p.fil_layout), q.out_layout = TwoD(p.out_layout);
  q.trans_output_pad = {0, 0, 0};
  return q;
}

// Spatial dimension `to` of q takes p's dimension `from` (extent, taps, padding, stride, dilation).
void Take(Problem& q, int to, const Problem& p, int from) {
  q.in[to] = p.in[from], q.fil[to] = p.fil[from], q.pad[to] = p.pad[from];
  q.stride[to] = p.stride[from], q.dilation[to] = p.dilation[from];
}

// Spatial dimension `to` of q: an identity of `extent`.
void Plain(Problem& q, int to, int64_t extent) {
  q.in[to] = extent, q.fil[to] = 1, q.pad[to] = 0, q.stride[to] = 1, q.dilation[to] = 1;
}

// q, made 2-D (depth 1), with its pad mode normalised; nullopt where it is not a valid problem.
std::optional<Problem> Finished(Problem q) {
  Plain(q, 0, 1);
  q.pad_mode = NormalizedPadMode(q);
  if (!ValidateProblem(q).ok()) return std::nullopt;
  return q;
}

}  // namespace

std::optional<Problem> FlattenTo2d(const Problem& p) {
  if (p.spatial_dims != 3 || p.mode != ConvMode::kConv) return std::nullopt;
  Problem q = Base(p);
  if (Identity(p, 1) && Identity(p, 2)) {  // (D, H*W)
    Take(q, 1, p, 0);
    Plain(q, 2, p.in[1] * p.in[2]);
  } else if (Identity(p, 0) && (p.in[0] == 1 || (IsChannelsLast(p.in_layout) && IsChannelsLast(p.out_layout)))) {
    return DepthAsBatch(p);  // N*D images (one frame: any layout)
  } else if (Identity(p, 0) && Identity(p, 1)) {  // (D*H, W)
    Plain(q, 1, p.in[0] * p.in[1]);
    Take(q, 2, p, 2);
  } else {
    return std::nullopt;
  }
  return Finished(q);
}

std::optional<Problem> DepthAsBatch(const Problem& p) {
  if (p.spatial_dims != 3 || p.mode != ConvMode::kConv || !Identity(p, 0)) return std::nullopt;
  Problem q = Base(p);
  q.n = p.n * p.in[0];
  Take(q, 1, p, 1);
  Take(q, 2, p, 2);
  return Finished(q);
}

}  // namespace tuna
