#include "tuner_core/problem/validate.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "tuner_core/problem/text_util.h"

namespace tuna {
namespace {

constexpr const char* kAxis[3] = {"d", "h", "w"};

absl::Status Bad(std::string msg) { return absl::InvalidArgumentError(std::move(msg)); }

absl::Status CheckRange(const char* name, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) {
    return Bad(text::Cat(name, " ", v, " is out of range [", lo, ", ", hi, "]"));
  }
  return absl::OkStatus();
}

// Multiplies extents; false when the product exceeds `cap` (checked before it can overflow,
// since every factor is already known to be positive).
bool BoundedProduct(std::initializer_list<int64_t> factors, int64_t cap, int64_t* out) {
  int64_t acc = 1;
  for (int64_t f : factors) {
    if (f <= 0) return false;
    if (acc > cap / f) return false;
    acc *= f;
  }
  *out = acc;
  return true;
}

bool LayoutFits(Layout l, int spatial_dims) {
  if (spatial_dims == 2) return l == Layout::kNCHW || l == Layout::kNHWC;
  return l == Layout::kNCDHW || l == Layout::kNDHWC;
}

}  // namespace

absl::Status ValidateProblem(const Problem& p, const ProblemLimits& limits) {
  const int64_t max_dim = limits.max_dim;
  if (p.spatial_dims != 2 && p.spatial_dims != 3) {
    return Bad(text::Cat("spatial_dims ", p.spatial_dims, " must be 2 or 3"));
  }
  if (auto s = CheckRange("n", p.n, 1, max_dim); !s.ok()) return s;
  if (auto s = CheckRange("c", p.c, 1, max_dim); !s.ok()) return s;
  if (auto s = CheckRange("k", p.k, 1, max_dim); !s.ok()) return s;
  if (auto s = CheckRange("groups", p.groups, 1, max_dim); !s.ok()) return s;

  // Every per-axis field is bounded first, so the output arithmetic below cannot overflow.
  const int first = p.spatial_dims == 3 ? 0 : 1;
  for (int i = first; i < 3; ++i) {
    const std::string a = kAxis[i];
    if (auto s = CheckRange(("in_" + a).c_str(), p.in[i], 1, max_dim); !s.ok()) return s;
    if (auto s = CheckRange(("fil_" + a).c_str(), p.fil[i], 1, max_dim); !s.ok()) return s;
    if (auto s = CheckRange(("pad_" + a).c_str(), p.pad[i], 0, max_dim); !s.ok()) return s;
    if (auto s = CheckRange(("stride_" + a).c_str(), p.stride[i], 1, max_dim); !s.ok()) return s;
    if (auto s = CheckRange(("dilation_" + a).c_str(), p.dilation[i], 1, max_dim); !s.ok())
      return s;
    if (auto s = CheckRange(("trans_output_pad_" + a).c_str(), p.trans_output_pad[i], 0, max_dim);
        !s.ok())
      return s;
  }
  // 2D problems carry a normalised depth so that equal problems compare equal (problem.h).
  if (p.spatial_dims == 2) {
    if (p.in[0] != 1 || p.fil[0] != 1 || p.pad[0] != 0 || p.stride[0] != 1 ||
        p.dilation[0] != 1 || p.trans_output_pad[0] != 0) {
      return Bad(text::Cat(
          "2D problem must have in_d=fil_d=1, pad_d=0, stride_d=dilation_d=1, "
          "trans_output_pad_d=0 (got in_d ",
          p.in[0], ", fil_d ", p.fil[0], ", pad_d ", p.pad[0], ", stride_d ", p.stride[0],
          ", dilation_d ", p.dilation[0], ", trans_output_pad_d ", p.trans_output_pad[0], ")"));
    }
  }
  for (int i = first; i < 3; ++i) {
    if (p.mode == ConvMode::kConv && p.trans_output_pad[i] != 0) {
      return Bad(text::Cat("trans_output_pad_", kAxis[i], " ", p.trans_output_pad[i],
                              " is only allowed with mode trans"));
    }
    // Like PyTorch/MIOpen: the extra output rows must stay inside one stride or dilation step.
    if (p.mode == ConvMode::kTrans && p.trans_output_pad[i] != 0 &&
        p.trans_output_pad[i] >= std::max(p.stride[i], p.dilation[i])) {
      return Bad(text::Cat("trans_output_pad_", kAxis[i], " ", p.trans_output_pad[i],
                              " must be smaller than stride or dilation"));
    }
  }

  if (p.c % p.groups != 0) {
    return Bad(text::Cat("groups ", p.groups, " does not divide c ", p.c));
  }
  if (p.k % p.groups != 0) {
    return Bad(text::Cat("groups ", p.groups, " does not divide k ", p.k));
  }

  for (Layout l : {p.in_layout, p.fil_layout, p.out_layout}) {
    if (!LayoutFits(l, p.spatial_dims)) {
      return Bad(text::Cat("layout ", LayoutName(l), " does not fit a ", p.spatial_dims,
                              "D problem (", p.spatial_dims == 2 ? "NCHW or NHWC" : "NCDHW or NDHWC",
                              ")"));
    }
  }

  if (p.pad_mode != PadMode::kDefault) {
    if (p.mode != ConvMode::kConv) {
      return Bad(text::Cat("pad_mode ", PadModeName(p.pad_mode), " needs mode conv"));
    }
    for (int i = first; i < 3; ++i) {
      if (p.dilation[i] != 1) {
        return Bad(text::Cat("pad_mode ", PadModeName(p.pad_mode), " needs dilation 1 (dilation_",
                             kAxis[i], " is ", p.dilation[i], ")"));
      }
    }
  }
  const Dhw out = p.Out();
  for (int i = first; i < 3; ++i) {
    if (out[i] < 1) {
      return Bad(text::Cat("empty output along ", kAxis[i], " (", out[i], ")"));
    }
    if (out[i] > max_dim) {
      return Bad(text::Cat("output ", kAxis[i], " ", out[i], " exceeds ", max_dim));
    }
  }
  if (p.pad_mode != PadMode::kDefault) {
    const Dhw want = p.pad_mode == PadMode::kSame ? SamePads(p) : Dhw{0, 0, 0};
    if (p.pad != want) {
      return Bad(text::Cat("pad_mode ", PadModeName(p.pad_mode), " needs MIOpenDriver's pads ",
                           want[0], "x", want[1], "x", want[2], " (got ", p.pad[0], "x", p.pad[1],
                           "x", p.pad[2], ")"));
    }
  }
  if (p.pad_mode != NormalizedPadMode(p)) {
    return Bad(text::Cat("pad_mode ", PadModeName(p.pad_mode),
                         " gives the default output size here; it is written as default"));
  }

  const int64_t cap = limits.max_tensor_elements;
  int64_t elems = 0;
  if (!BoundedProduct({p.n, p.c, p.in[0], p.in[1], p.in[2]}, cap, &elems)) {
    return Bad(text::Cat("input tensor ", p.n, "x", p.c, "x", p.in[0], "x", p.in[1], "x",
                            p.in[2], " exceeds ", cap, " elements"));
  }
  if (!BoundedProduct({p.k, p.c / p.groups, p.fil[0], p.fil[1], p.fil[2]}, cap, &elems)) {
    return Bad(text::Cat("filter tensor ", p.k, "x", p.c / p.groups, "x", p.fil[0], "x",
                            p.fil[1], "x", p.fil[2], " exceeds ", cap, " elements"));
  }
  if (!BoundedProduct({p.n, p.k, out[0], out[1], out[2]}, cap, &elems)) {
    return Bad(text::Cat("output tensor ", p.n, "x", p.k, "x", out[0], "x", out[1], "x", out[2],
                            " exceeds ", cap, " elements"));
  }
  return absl::OkStatus();
}

}  // namespace tuna
