#include "tuner_core/reference/reference_conv.h"

#include <type_traits>
#include <vector>

#include "absl/strings/str_format.h"
#include "tuner_core/numeric/bf16.h"
#include "tuner_core/numeric/fp16.h"
#include "tuner_core/numeric/round_to_odd.h"
#include "tuner_core/reference/conv_kernels.h"
#include "tuner_core/reference/parallel.h"

namespace tuna::reference {
namespace {

using internal::ConvGeometry;

// INT8 products are at most 128*128 = 2^14 in magnitude; int32 sums of fewer than 2^17 of
// them cannot overflow.
constexpr int64_t kMaxInt8Reduction = (int64_t{1} << 17) - 1;

bool IsChannelsFirst(const TensorDesc& d) {
  const auto& s = d.strides;
  const auto& n = d.dims;
  return s[4] == 1 && s[3] == n[4] && s[2] == n[3] * n[4] && s[1] == n[2] * n[3] * n[4] &&
         s[0] == n[1] * n[2] * n[3] * n[4];
}

template <typename T, typename S>
T ToCompute(S v) {
  if constexpr (std::is_same_v<S, Fp16> || std::is_same_v<S, Bf16>) {
    return static_cast<T>(v.ToFloat());
  } else {
    return static_cast<T>(v);
  }
}

// One rounding to the storage type (round-to-nearest-even).
template <typename S, typename T>
S FromCompute(T v) {
  if constexpr (std::is_same_v<S, Fp16>) {
    if constexpr (std::is_same_v<T, double>) return Fp16::FromBits(DoubleToFp16Bits(v));
    else return Fp16(static_cast<float>(v));
  } else if constexpr (std::is_same_v<S, Bf16>) {
    if constexpr (std::is_same_v<T, double>) return Bf16::FromBits(DoubleToBf16Bits(v));
    else return Bf16(static_cast<float>(v));
  } else {
    return static_cast<S>(v);
  }
}

// Copies a tensor in its layout into a dense channels-first buffer of the compute type, in
// parallel over (n, c) planes (pure data movement, so the partition cannot change results).
template <typename T, typename S>
void Gather(const TensorDesc& d, const S* src, T* dst, int threads) {
  const auto& n = d.dims;
  const int64_t sw = d.strides[4], plane = n[2] * n[3] * n[4];
  ParallelFor(n[0] * n[1], threads, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      T* out = dst + item * plane;
      for (int64_t c = 0; c < n[2]; ++c)
        for (int64_t e = 0; e < n[3]; ++e) {
          const S* row = src + d.Offset(item / n[1], item % n[1], c, e, 0);
          for (int64_t f = 0; f < n[4]; ++f) *out++ = ToCompute<T>(row[f * sw]);
        }
    }
  });
}

template <typename S, typename T>
void Scatter(const TensorDesc& d, const T* src, S* dst, int threads) {
  const auto& n = d.dims;
  const int64_t sw = d.strides[4], plane = n[2] * n[3] * n[4];
  ParallelFor(n[0] * n[1], threads, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const T* in = src + item * plane;
      for (int64_t c = 0; c < n[2]; ++c)
        for (int64_t e = 0; e < n[3]; ++e) {
          S* row = dst + d.Offset(item / n[1], item % n[1], c, e, 0);
          for (int64_t f = 0; f < n[4]; ++f) row[f * sw] = FromCompute<S>(*in++);
        }
    }
  });
}

// An input seen as a dense channels-first T buffer: borrowed when it already is one, else a
// converted copy.
template <typename T, typename S>
class DenseInput {
 public:
  DenseInput(const TensorDesc& d, const void* data, int threads) {
    const S* src = static_cast<const S*>(data);
    if constexpr (std::is_same_v<T, S>) {
      if (IsChannelsFirst(d)) {
        ptr_ = src;
        return;
      }
    }
    copy_.resize(d.ElementCount());
    Gather(d, src, copy_.data(), threads);
    ptr_ = copy_.data();
  }
  const T* get() const { return ptr_; }

 private:
  std::vector<T> copy_;
  const T* ptr_ = nullptr;
};

// The output: computed in place when the caller's buffer is already dense channels-first T,
// else into a scratch buffer that Finish() converts and scatters.
template <typename T, typename S>
class DenseOutput {
 public:
  DenseOutput(const TensorDesc& d, void* data, int threads)
      : desc_(d), dst_(static_cast<S*>(data)), threads_(threads) {
    if constexpr (std::is_same_v<T, S>) {
      if (IsChannelsFirst(d)) {
        ptr_ = dst_;
        return;
      }
    }
    copy_.resize(d.ElementCount());
    ptr_ = copy_.data();
  }
  T* get() { return ptr_; }
  void Finish() {
    if (!copy_.empty()) Scatter(desc_, copy_.data(), dst_, threads_);
  }

 private:
  TensorDesc desc_;
  S* dst_;
  int threads_;
  std::vector<T> copy_;
  T* ptr_ = nullptr;
};

// S: input storage type, O: output storage type, T: accumulation type.
template <typename S, typename O, typename T>
void RunTyped(const Problem& p, Direction dir, const ConvTensors& t, int threads) {
  const ConvGeometry g = internal::MakeGeometry(p);
  const TensorDesc xd = p.XDesc(), wd = p.WDesc(), yd = p.YDesc();
  switch (dir) {
    case Direction::kForward: {
      DenseInput<T, S> x(xd, t.x, threads), w(wd, t.w, threads);
      DenseOutput<T, O> y(yd, t.out, threads);
      internal::ForwardDense<T>(g, x.get(), w.get(), y.get(), threads);
      y.Finish();
      return;
    }
    case Direction::kBackwardData: {
      DenseInput<T, S> dy(yd, t.y, threads), w(wd, t.w, threads);
      DenseOutput<T, O> dx(xd, t.out, threads);
      internal::BackwardDataDense<T>(g, dy.get(), w.get(), dx.get(), threads);
      dx.Finish();
      return;
    }
    case Direction::kBackwardWeights: {
      DenseInput<T, S> x(xd, t.x, threads), dy(yd, t.y, threads);
      DenseOutput<T, O> dw(wd, t.out, threads);
      internal::BackwardWeightsDense<T>(g, x.get(), dy.get(), dw.get(), threads);
      dw.Finish();
      return;
    }
  }
}

absl::Status CheckBuffers(Direction dir, const ConvTensors& t) {
  const bool ok = t.out != nullptr && (dir == Direction::kBackwardData || t.x != nullptr) &&
                  (dir == Direction::kBackwardWeights || t.w != nullptr) &&
                  (dir == Direction::kForward || t.y != nullptr);
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrFormat("reference conv %s: a buffer the direction needs is null",
                        DirectionName(dir)));
  }
  return absl::OkStatus();
}

absl::Status Run(const Problem& p, Direction dir, const ConvTensors& t, const ConvOptions& o) {
  if (absl::Status s = CheckProblem(p); !s.ok()) return s;
  if (absl::Status s = CheckBuffers(dir, t); !s.ok()) return s;
  if (o.threads < 0) return absl::InvalidArgumentError("reference conv: negative thread count");
  const bool f64 = o.accumulation == Accumulation::kFp64;
  switch (p.data_type) {
    case DataType::kFp32:
      if (f64) RunTyped<float, float, double>(p, dir, t, o.threads);
      else RunTyped<float, float, float>(p, dir, t, o.threads);
      return absl::OkStatus();
    case DataType::kFp16:
      if (f64) RunTyped<Fp16, Fp16, double>(p, dir, t, o.threads);
      else RunTyped<Fp16, Fp16, float>(p, dir, t, o.threads);
      return absl::OkStatus();
    case DataType::kBf16:
      if (f64) RunTyped<Bf16, Bf16, double>(p, dir, t, o.threads);
      else RunTyped<Bf16, Bf16, float>(p, dir, t, o.threads);
      return absl::OkStatus();
    case DataType::kInt8:
      if (dir != Direction::kForward) {
        return absl::UnimplementedError(absl::StrFormat(
            "reference conv: INT8 supports forward only (asked for %s)", DirectionName(dir)));
      }
      if (ReductionLength(p, dir) > kMaxInt8Reduction) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "reference conv: INT8 reduction length %d could overflow int32 (max %d)",
            ReductionLength(p, dir), kMaxInt8Reduction));
      }
      RunTyped<int8_t, int32_t, int32_t>(p, dir, t, o.threads);
      return absl::OkStatus();
  }
  return absl::InvalidArgumentError("reference conv: unknown data type");
}

absl::Status RunF64(const Problem& p, Direction dir, std::span<const double> a,
                    std::span<const double> b, std::span<double> out, int threads) {
  if (absl::Status s = CheckProblem(p); !s.ok()) return s;
  if (threads < 0) return absl::InvalidArgumentError("reference conv: negative thread count");
  const int64_t nx = p.XDesc().ElementCount(), nw = p.WDesc().ElementCount(),
                ny = p.YDesc().ElementCount();
  int64_t need_a = 0, need_b = 0, need_out = 0;
  ConvTensors t;
  switch (dir) {
    case Direction::kForward:
      need_a = nx, need_b = nw, need_out = ny;
      t.x = a.data(), t.w = b.data();
      break;
    case Direction::kBackwardData:
      need_a = ny, need_b = nw, need_out = nx;
      t.y = a.data(), t.w = b.data();
      break;
    case Direction::kBackwardWeights:
      need_a = nx, need_b = ny, need_out = nw;
      t.x = a.data(), t.y = b.data();
      break;
  }
  t.out = out.data();
  if (int64_t(a.size()) < need_a || int64_t(b.size()) < need_b ||
      int64_t(out.size()) < need_out) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reference conv %s (F64): spans hold %d/%d/%d elements, need %d/%d/%d",
        DirectionName(dir), a.size(), b.size(), out.size(), need_a, need_b, need_out));
  }
  RunTyped<double, double, double>(p, dir, t, threads);
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckProblem(const Problem& p) {
  if (p.mode != ConvMode::kConv) {
    return absl::UnimplementedError("reference conv: transposed convolution is not supported");
  }
  if (p.spatial_dims != 2 && p.spatial_dims != 3) {
    return absl::InvalidArgumentError(
        absl::StrFormat("reference conv: spatial_dims %d is not 2 or 3", p.spatial_dims));
  }
  if (p.n <= 0 || p.c <= 0 || p.k <= 0 || p.groups <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reference conv: n=%d c=%d k=%d groups=%d must be positive", p.n, p.c, p.k, p.groups));
  }
  if (p.c % p.groups != 0 || p.k % p.groups != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reference conv: c=%d and k=%d must be multiples of groups=%d", p.c, p.k, p.groups));
  }
  static constexpr const char* kDim[3] = {"d", "h", "w"};
  for (int i = 0; i < 3; ++i) {
    if (p.in[i] <= 0 || p.fil[i] <= 0 || p.pad[i] < 0 || p.stride[i] <= 0 ||
        p.dilation[i] <= 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "reference conv: bad %s geometry (in=%d fil=%d pad=%d stride=%d dilation=%d)",
          kDim[i], p.in[i], p.fil[i], p.pad[i], p.stride[i], p.dilation[i]));
    }
    if (p.Out()[i] < 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "reference conv: empty output in %s (in=%d pad=%d, dilated filter %d)", kDim[i],
          p.in[i], p.pad[i], p.dilation[i] * (p.fil[i] - 1) + 1));
    }
  }
  if (p.spatial_dims == 2 && (p.in[0] != 1 || p.fil[0] != 1 || p.pad[0] != 0 ||
                              p.stride[0] != 1 || p.dilation[0] != 1)) {
    return absl::InvalidArgumentError(
        "reference conv: 2D problem with depth fields not normalised to in=fil=stride="
        "dilation=1, pad=0");
  }
  return absl::OkStatus();
}

TensorDesc OutputDesc(const Problem& p, Direction dir) {
  switch (dir) {
    case Direction::kForward: return p.YDesc();
    case Direction::kBackwardData: return p.XDesc();
    case Direction::kBackwardWeights: return p.WDesc();
  }
  return {};
}

int64_t ReductionLength(const Problem& p, Direction dir) {
  const int64_t taps = p.fil[0] * p.fil[1] * p.fil[2];
  switch (dir) {
    case Direction::kForward: return (p.c / p.groups) * taps;
    case Direction::kBackwardData: return (p.k / p.groups) * taps;
    case Direction::kBackwardWeights: {
      const Dhw o = p.Out();
      return p.n * o[0] * o[1] * o[2];
    }
  }
  return 0;
}

size_t OutputElementSize(const Problem& p, Direction dir) {
  if (p.data_type == DataType::kInt8 && dir == Direction::kForward) return sizeof(int32_t);
  return DataTypeSize(p.data_type);
}

absl::Status RunConv(const Problem& p, const ConvTensors& t, const ConvOptions& o) {
  return Run(p, p.direction, t, o);
}

absl::Status ConvForward(const Problem& p, const void* x, const void* w, void* y,
                         const ConvOptions& o) {
  return Run(p, Direction::kForward, ConvTensors{x, w, nullptr, y}, o);
}

absl::Status ConvBackwardData(const Problem& p, const void* dy, const void* w, void* dx,
                              const ConvOptions& o) {
  return Run(p, Direction::kBackwardData, ConvTensors{nullptr, w, dy, dx}, o);
}

absl::Status ConvBackwardWeights(const Problem& p, const void* x, const void* dy, void* dw,
                                 const ConvOptions& o) {
  return Run(p, Direction::kBackwardWeights, ConvTensors{x, nullptr, dy, dw}, o);
}

absl::Status ConvForwardF64(const Problem& p, std::span<const double> x,
                            std::span<const double> w, std::span<double> y, int threads) {
  return RunF64(p, Direction::kForward, x, w, y, threads);
}

absl::Status ConvBackwardDataF64(const Problem& p, std::span<const double> dy,
                                 std::span<const double> w, std::span<double> dx,
                                 int threads) {
  return RunF64(p, Direction::kBackwardData, dy, w, dx, threads);
}

absl::Status ConvBackwardWeightsF64(const Problem& p, std::span<const double> x,
                                    std::span<const double> dy, std::span<double> dw,
                                    int threads) {
  return RunF64(p, Direction::kBackwardWeights, x, dy, dw, threads);
}

}  // namespace tuna::reference
