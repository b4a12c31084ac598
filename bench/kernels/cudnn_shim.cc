#include "bench/kernels/cudnn_shim.h"

#include "bench/kernels/cudnn_library.h"



#include "absl/strings/str_cat.h"

namespace tuna::bench {
namespace {

// cudnnDataType_t, cudnnTensorFormat_t, cudnnConvolutionMode_t, cudnnMathType_t.
constexpr int kDataFloat = 0, kDataHalf = 2, kDataBf16 = 9;
constexpr int kFormatNchw = 0, kFormatNhwc = 1;
constexpr int kCrossCorrelation = 1;
constexpr int kTensorOpMath = 1, kFmaMath = 3;

// cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t share this layout.
struct AlgoPerf {
  int algo;
  int status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};

}  // namespace

class CudnnLib : public CudnnCommonLib {
 public:
  Status (*create_tensor)(void**) = nullptr;
  Status (*destroy_tensor)(void*) = nullptr;
  Status (*set_tensor4d)(void*, int, int, int, int, int, int) = nullptr;
  Status (*create_filter)(void**) = nullptr;
  Status (*destroy_filter)(void*) = nullptr;
  Status (*set_filter4d)(void*, int, int, int, int, int, int) = nullptr;
  Status (*create_conv)(void**) = nullptr;
  Status (*destroy_conv)(void*) = nullptr;
  Status (*set_conv2d)(void*, int, int, int, int, int, int, int, int) = nullptr;
  Status (*set_math)(void*, int) = nullptr;
  Status (*set_group)(void*, int) = nullptr;
  Status (*find_fwd)(void*, void*, const void*, void*, const void*, void*, void*, void*, int, int*, AlgoPerf*,
                     void*, size_t) = nullptr;
  Status (*find_bwd_data)(void*, void*, const void*, void*, const void*, void*, void*, void*, int, int*,
                          AlgoPerf*, void*, size_t) = nullptr;
  Status (*find_bwd_filter)(void*, void*, const void*, void*, const void*, void*, void*, void*, int, int*,
                            AlgoPerf*, void*, size_t) = nullptr;
  Status (*fwd)(void*, const void*, void*, const void*, void*, const void*, void*, int, void*, size_t,
                const void*, void*, void*) = nullptr;
  Status (*bwd_data)(void*, const void*, void*, const void*, void*, const void*, void*, int, void*, size_t,
                     const void*, void*, void*) = nullptr;
  Status (*bwd_filter)(void*, const void*, void*, const void*, void*, const void*, void*, int, void*, size_t,
                       const void*, void*, void*) = nullptr;

  static absl::StatusOr<const CudnnLib*> Get(const std::string& path) {
    return LoadCudnnOnce<CudnnLib>(path, [](CudnnLib& l, CudnnSymbols& s, void* handle) {
      s.Get(l.create_tensor, "cudnnCreateTensorDescriptor");
      s.Get(l.destroy_tensor, "cudnnDestroyTensorDescriptor");
      s.Get(l.set_tensor4d, "cudnnSetTensor4dDescriptor");
      s.Get(l.create_filter, "cudnnCreateFilterDescriptor");
      s.Get(l.destroy_filter, "cudnnDestroyFilterDescriptor");
      s.Get(l.set_filter4d, "cudnnSetFilter4dDescriptor");
      s.Get(l.create_conv, "cudnnCreateConvolutionDescriptor");
      s.Get(l.destroy_conv, "cudnnDestroyConvolutionDescriptor");
      s.Get(l.set_conv2d, "cudnnSetConvolution2dDescriptor");
      s.Get(l.set_math, "cudnnSetConvolutionMathType");
      s.Get(l.set_group, "cudnnSetConvolutionGroupCount");
      s.Get(l.find_fwd, "cudnnFindConvolutionForwardAlgorithmEx");
      s.Get(l.find_bwd_data, "cudnnFindConvolutionBackwardDataAlgorithmEx");
      s.Get(l.find_bwd_filter, "cudnnFindConvolutionBackwardFilterAlgorithmEx");
      s.Get(l.fwd, "cudnnConvolutionForward");
      s.Get(l.bwd_data, "cudnnConvolutionBackwardData");
      s.Get(l.bwd_filter, "cudnnConvolutionBackwardFilter");
      (void)handle;
    });
  }

  absl::Status Check(Status s, const char* what) const {
    if (s == 0) return absl::OkStatus();
    return absl::InternalError(absl::StrCat(what, ": ", error_string(s), " (", s, ")"));
  }
};

CudnnConv::~CudnnConv() {
  if (lib_ == nullptr) return;
  if (cd_) lib_->destroy_conv(cd_);
  if (wd_) lib_->destroy_filter(wd_);
  if (xd_) lib_->destroy_tensor(xd_);
  if (yd_) lib_->destroy_tensor(yd_);
  if (handle_) lib_->destroy(handle_);
}

std::string CudnnConv::version() const { return lib_ ? absl::StrCat(lib_->get_version()) : ""; }

absl::StatusOr<std::unique_ptr<CudnnConv>> CudnnConv::Create(const std::string& path, const Problem& p) {
  absl::StatusOr<const CudnnLib*> lib = CudnnLib::Get(path);
  if (!lib.ok()) return lib.status();
  if (p.spatial_dims != 2) return absl::UnimplementedError("cudnn shim: 2D only");
  std::unique_ptr<CudnnConv> c(new CudnnConv());
  c->lib_ = *lib;
  c->p_ = p;
  const CudnnLib& l = **lib;
  const int type = p.data_type == DataType::kFp32 ? kDataFloat : p.data_type == DataType::kFp16 ? kDataHalf : kDataBf16;
  auto format = [](Layout lay) { return lay == Layout::kNHWC ? kFormatNhwc : kFormatNchw; };
  const Dhw o = p.Out();
  absl::Status st = l.Check(l.create(&c->handle_), "cudnnCreate");
  if (st.ok()) st = l.Check(l.create_tensor(&c->xd_), "cudnnCreateTensorDescriptor");
  if (st.ok()) st = l.Check(l.create_tensor(&c->yd_), "cudnnCreateTensorDescriptor");
  if (st.ok()) st = l.Check(l.create_filter(&c->wd_), "cudnnCreateFilterDescriptor");
  if (st.ok()) st = l.Check(l.create_conv(&c->cd_), "cudnnCreateConvolutionDescriptor");
  if (st.ok()) {
    st = l.Check(l.set_tensor4d(c->xd_, format(p.in_layout), type, (int)p.n, (int)p.c, (int)p.in[1], (int)p.in[2]),
                 "cudnnSetTensor4dDescriptor(x)");
  }
  if (st.ok()) {
    st = l.Check(l.set_tensor4d(c->yd_, format(p.out_layout), type, (int)p.n, (int)p.k, (int)o[1], (int)o[2]),
                 "cudnnSetTensor4dDescriptor(y)");
  }
  if (st.ok()) {
    st = l.Check(l.set_filter4d(c->wd_, type, format(p.fil_layout), (int)p.k, (int)(p.c / p.groups), (int)p.fil[1],
                                (int)p.fil[2]),
                 "cudnnSetFilter4dDescriptor");
  }
  if (st.ok()) {
    st = l.Check(l.set_conv2d(c->cd_, (int)p.pad[1], (int)p.pad[2], (int)p.stride[1], (int)p.stride[2],
                              (int)p.dilation[1], (int)p.dilation[2], kCrossCorrelation, kDataFloat),
                 "cudnnSetConvolution2dDescriptor");
  }
  if (st.ok()) {
    st = l.Check(l.set_math(c->cd_, p.data_type == DataType::kFp32 ? kFmaMath : kTensorOpMath),
                 "cudnnSetConvolutionMathType");
  }
  if (st.ok() && p.groups > 1) st = l.Check(l.set_group(c->cd_, (int)p.groups), "cudnnSetConvolutionGroupCount");
  if (!st.ok()) return st;
  return c;
}

absl::StatusOr<CudnnChoice> CudnnConv::Find(uint64_t x, uint64_t w, uint64_t y, uint64_t ws, size_t ws_bytes) {
  const CudnnLib& l = *lib_;
  AlgoPerf perf[16] = {};
  int count = 0;
  void* px = reinterpret_cast<void*>(x);
  void* pw = reinterpret_cast<void*>(w);
  void* py = reinterpret_cast<void*>(y);
  void* pws = reinterpret_cast<void*>(ws);
  absl::Status st;
  switch (p_.direction) {
    case Direction::kForward:
      st = l.Check(l.find_fwd(handle_, xd_, px, wd_, pw, cd_, yd_, py, 16, &count, perf, pws, ws_bytes),
                   "cudnnFindConvolutionForwardAlgorithmEx");
      break;
    case Direction::kBackwardData:
      st = l.Check(l.find_bwd_data(handle_, wd_, pw, yd_, py, cd_, xd_, px, 16, &count, perf, pws, ws_bytes),
                   "cudnnFindConvolutionBackwardDataAlgorithmEx");
      break;
    case Direction::kBackwardWeights:
      st = l.Check(l.find_bwd_filter(handle_, xd_, px, yd_, py, cd_, wd_, pw, 16, &count, perf, pws, ws_bytes),
                   "cudnnFindConvolutionBackwardFilterAlgorithmEx");
      break;
  }
  if (!st.ok()) return st;
  for (int i = 0; i < count; ++i) {  // sorted by time; skip failed / oversized entries
    if (perf[i].status == 0 && perf[i].memory <= ws_bytes) {
      return CudnnChoice{perf[i].algo, perf[i].memory, perf[i].time, perf[i].math_type};
    }
  }
  return absl::NotFoundError("cuDNN found no algorithm");
}

absl::Status CudnnConv::Run(const CudnnChoice& ch, uint64_t x, uint64_t w, uint64_t y, uint64_t ws) {
  const CudnnLib& l = *lib_;
  const float alpha = 1.f, beta = 0.f;
  // Run with the math type Find measured (as PyTorch does); FP32 stays FMA-only either way.
  if (p_.data_type != DataType::kFp32) {
    if (absl::Status st = l.Check(l.set_math(cd_, ch.math_type), "cudnnSetConvolutionMathType"); !st.ok()) return st;
  }
  void* px = reinterpret_cast<void*>(x);
  void* pw = reinterpret_cast<void*>(w);
  void* py = reinterpret_cast<void*>(y);
  void* pws = reinterpret_cast<void*>(ws);
  switch (p_.direction) {
    case Direction::kForward:
      return l.Check(l.fwd(handle_, &alpha, xd_, px, wd_, pw, cd_, ch.algo, pws, ch.workspace_bytes, &beta, yd_, py),
                     "cudnnConvolutionForward");
    case Direction::kBackwardData:
      return l.Check(
          l.bwd_data(handle_, &alpha, wd_, pw, yd_, py, cd_, ch.algo, pws, ch.workspace_bytes, &beta, xd_, px),
          "cudnnConvolutionBackwardData");
    case Direction::kBackwardWeights:
      return l.Check(
          l.bwd_filter(handle_, &alpha, xd_, px, yd_, py, cd_, ch.algo, pws, ch.workspace_bytes, &beta, wd_, pw),
          "cudnnConvolutionBackwardFilter");
  }
  return absl::InternalError("bad direction");
}

}  // namespace tuna::bench
