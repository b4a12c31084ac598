#include "tuner_core/search/measure/device_compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"
#include "tuner_core/solver/invoker.h"

namespace tuna::search {
namespace {

constexpr char kSource[] = "conv/verify_compare.cu";
constexpr char kEntry[] = "verify_compare";
constexpr uint32_t kThreads = 256;  // TUNA_VERIFY_THREADS
constexpr uint32_t kMaxBlocks = 2048;
constexpr int kSums = 8;

absl::StatusOr<const char*> TypeOption(reference::ElementType type) {
  switch (type) {
    case reference::ElementType::kFp32: return "-DTUNA_VERIFY_FP32";
    case reference::ElementType::kFp16: return "-DTUNA_VERIFY_FP16";
    case reference::ElementType::kBf16: return "-DTUNA_VERIFY_BF16";
    default:
      return absl::UnimplementedError(absl::StrCat("no device comparison for ",
                                                   reference::ElementTypeName(type), " outputs"));
  }
}

double FromBits(uint64_t bits) {
  double v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

}  // namespace

absl::StatusOr<backend::CodeObject> CompareKernelCache::Get(const backend::Backend& backend,
                                                            const std::string& arch,
                                                            reference::ElementType type) {
  absl::StatusOr<const char*> option = TypeOption(type);
  if (!option.ok()) return option.status();
  const std::string key = absl::StrCat(arch, "|", *option);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = code_.find(key);
  if (it != code_.end()) return it->second;
  solver::Solution s;
  s.kernels.push_back({kSource, {kEntry}, {*option}});
  absl::StatusOr<std::vector<backend::CodeObject>> code = solver::CompileSolution(backend, s, arch);
  if (!code.ok()) return code.status();
  return code_.emplace(key, code->front()).first->second;
}

absl::StatusOr<std::unique_ptr<DeviceComparer>> DeviceComparer::Create(
    backend::Device& device, const backend::CodeObject& code, const Problem& problem,
    const std::vector<std::byte>& expected, const reference::Tolerance& tolerance,
    const backend::DeviceBuffer& poison) {
  std::unique_ptr<DeviceComparer> c(new DeviceComparer(device));
  c->type_ = reference::OutputType(problem, problem.direction);
  if (absl::StatusOr<const char*> o = TypeOption(c->type_); !o.ok()) return o.status();
  c->desc_ = reference::OutputDesc(problem, problem.direction);
  c->count_ = c->desc_.ElementCount();
  c->reduction_length_ = reference::ReductionLength(problem, problem.direction);
  c->tolerance_ = tolerance;
  const size_t bytes = static_cast<size_t>(c->count_) * reference::ElementSize(c->type_);
  if (expected.size() < bytes || poison.bytes() < bytes) {
    return absl::InvalidArgumentError("device comparison: buffers smaller than the output");
  }

  absl::StatusOr<std::unique_ptr<backend::Module>> module = device.Load(code);
  if (!module.ok()) return module.status();
  c->module_ = *std::move(module);
  absl::StatusOr<backend::Kernel> kernel = c->module_->GetKernel(kEntry);
  if (!kernel.ok()) return kernel.status();
  c->kernel_ = *kernel;
  absl::StatusOr<backend::DeviceBuffer> e = device.Alloc(bytes);
  if (!e.ok()) return e.status();
  c->expected_ = *std::move(e);
  absl::StatusOr<backend::DeviceBuffer> sums = device.Alloc(kSums * sizeof(uint64_t));
  if (!sums.ok()) return sums.status();
  c->sums_ = *std::move(sums);
  if (absl::Status st = device.CopyToDevice(c->expected_, expected.data(), bytes); !st.ok()) {
    return st;
  }

  // The reference against itself: no error anywhere (whatever the bound), and the sums of the
  // host comparison's first pass over the reference come out as by-products (max |got| is the
  // scale, the non-finite elements are the reference's).
  absl::StatusOr<reference::CompareSums> same = c->Sums(c->expected_);
  if (!same.ok()) return same.status();
  if (same->mismatches != 0 || same->max_abs_error != 0 || same->sum_sq != 0 ||
      !std::isfinite(same->max_got)) {
    return absl::InternalError(absl::StrCat(
        "device comparison self-check failed on the reference itself: mismatches ",
        same->mismatches, ", max error ", same->max_abs_error, ", max |got| ", same->max_got));
  }
  c->scale_ = same->max_got;
  c->ref_nonfinite_ = same->got_nan + same->got_inf;
  if (absl::Status st = device.Memset(poison, 0xFF, bytes); !st.ok()) return st;
  absl::StatusOr<reference::CompareSums> nan = c->Sums(poison);
  if (!nan.ok()) return nan.status();
  if (nan->got_nan != c->count_ || nan->mismatches < c->count_ - c->ref_nonfinite_ ||
      (c->count_ > c->ref_nonfinite_ && nan->first_mismatch < 0)) {
    return absl::InternalError(absl::StrCat(
        "device comparison self-check failed on a NaN buffer: ", nan->got_nan, " NaN and ",
        nan->mismatches, " mismatches of ", c->count_, " elements"));
  }
  return c;
}

absl::StatusOr<reference::CompareSums> DeviceComparer::Sums(const backend::DeviceBuffer& got) {
  uint64_t init[kSums] = {0, ~uint64_t{0}, 0, 0, 0, 0, 0, 0};
  if (absl::Status st = device_.CopyToDevice(sums_, init, sizeof(init)); !st.ok()) return st;
  const double abs_bound = reference::AbsBound(tolerance_, reduction_length_, scale_);
  backend::KernelArgs args;
  args.Add(got).Add(expected_).Add(static_cast<long long>(count_)).Add(tolerance_.element_rel)
      .Add(abs_bound).Add(sums_);
  const uint64_t blocks =
      std::clamp<uint64_t>((static_cast<uint64_t>(count_) + kThreads - 1) / kThreads, 1, kMaxBlocks);
  if (absl::Status st = device_.Launch(kernel_, backend::Dim3{static_cast<uint32_t>(blocks)},
                                       backend::Dim3{kThreads}, 0, args);
      !st.ok()) {
    return st;
  }
  uint64_t out[kSums];
  if (absl::Status st = device_.CopyToHost(out, sums_, sizeof(out)); !st.ok()) return st;
  reference::CompareSums s;
  s.count = count_;
  s.scale = scale_;
  s.ref_nonfinite = ref_nonfinite_;
  s.mismatches = static_cast<int64_t>(out[0]);
  s.first_mismatch = out[1] == ~uint64_t{0} ? -1 : static_cast<int64_t>(out[1]);
  s.got_nan = static_cast<int64_t>(out[2]);
  s.got_inf = static_cast<int64_t>(out[3]);
  s.max_abs_error = FromBits(out[4]);
  s.max_got = FromBits(out[5]);
  s.sum_sq = FromBits(out[6]);
  if (s.first_mismatch >= 0) {
    const size_t elem = reference::ElementSize(type_);
    std::vector<std::byte> one(2 * elem);
    const size_t at = static_cast<size_t>(s.first_mismatch) * elem;
    if (absl::Status st = device_.CopyToHost(one.data(), got, elem, at); !st.ok()) return st;
    if (absl::Status st = device_.CopyToHost(one.data() + elem, expected_, elem, at); !st.ok()) {
      return st;
    }
    s.first_got = reference::LoadAsDouble(type_, one.data(), 0);
    s.first_expected = reference::LoadAsDouble(type_, one.data(), 1);
  }
  return s;
}

absl::StatusOr<reference::VerifyReport> DeviceComparer::Compare(const backend::DeviceBuffer& got) {
  absl::StatusOr<reference::CompareSums> s = Sums(got);
  if (!s.ok()) return s.status();
  return reference::FinishReport(*s, reduction_length_, tolerance_, &desc_);
}

}  // namespace tuna::search
