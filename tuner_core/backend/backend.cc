#include "tuner_core/backend/backend.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace tuna::backend {
namespace {
// Marks a status as "the device context is gone" independently of its message text.
constexpr char kContextLostPayload[] = "tuna.backend/context_lost";
}  // namespace

absl::Status CheckBufferRange(const DeviceBuffer& buffer, size_t offset, size_t bytes) {
  if (!buffer.valid()) return absl::InvalidArgumentError("invalid device buffer");
  if (offset > buffer.bytes() || bytes > buffer.bytes() - offset) {
    return absl::InvalidArgumentError(absl::StrCat("range [", offset, ", ", offset + bytes,
                                                   ") outside a buffer of ", buffer.bytes(),
                                                   " bytes"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<DeviceInfo>> QueryEachDevice(
    const std::function<absl::Status(int*)>& count_devices,
    const std::function<absl::StatusOr<DeviceInfo>(int)>& query) {
  int count = 0;
  if (absl::Status st = count_devices(&count); !st.ok()) return st;
  std::vector<DeviceInfo> out;
  for (int i = 0; i < count; ++i) {
    absl::StatusOr<DeviceInfo> info = query(i);
    if (!info.ok()) return info.status();
    out.push_back(*std::move(info));
  }
  return out;
}

absl::Status CheckEntriesDefined(const std::string& compiler, const std::string& source_name,
                                 const std::string& code, const std::vector<std::string>& entries) {
  std::string missing;
  for (const std::string& e : entries) {
    if (!absl::StrContains(code, e)) absl::StrAppend(&missing, " ", e);
  }
  if (missing.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(compiler, " compile of ", source_name, ": entries not defined (TUNA_GLOBAL):", missing));
}

const char* BackendKindName(BackendKind kind) {
  switch (kind) {
    case BackendKind::kCpu: return "cpu";
    case BackendKind::kCuda: return "cuda";
    case BackendKind::kHip: return "hip";
  }
  return "unknown";
}

KernelArgs& KernelArgs::AddBytes(const void* data, size_t bytes, size_t align) {
  const size_t offset = (storage_size_ + align - 1) / align * align;
  Grow(offset + bytes);
  std::memcpy(Base() + offset, data, bytes);
  offsets_.push_back(offset);
  return *this;
}

KernelArgs& KernelArgs::Add(const DeviceBuffer& buffer) {
  return Add<uint64_t>(buffer.address());
}

void KernelArgs::Grow(size_t bytes) {
  if (bytes > storage_.size() * kSlotAlign) storage_.resize((bytes + kSlotAlign - 1) / kSlotAlign * 2);
  storage_size_ = bytes;
}

void** KernelArgs::Pointers() {
  pointers_.clear();
  for (size_t offset : offsets_) pointers_.push_back(Base() + offset);
  return pointers_.data();
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    Reset();
    device_ = std::exchange(other.device_, nullptr);
    address_ = std::exchange(other.address_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::Reset() {
  if (device_ == nullptr) return;
  if (absl::Status st = device_->FreeRaw(address_); !st.ok()) {
    spdlog::warn("freeing {} bytes at {:#x} on {}: {}", bytes_, address_, device_->Info().name,
                 st.ToString());
  }
  device_ = nullptr;
  address_ = 0;
  bytes_ = 0;
}

absl::StatusOr<DeviceBuffer> Device::Alloc(size_t bytes) {
  if (bytes == 0) return absl::InvalidArgumentError("allocation of 0 bytes");
  absl::StatusOr<uint64_t> address = AllocRaw(bytes);
  if (!address.ok()) return address.status();
  return DeviceBuffer(this, *address, bytes);
}

absl::Status ContextLostError(const std::string& what) {
  absl::Status st = absl::InternalError("context lost: " + what);
  st.SetPayload(kContextLostPayload, absl::Cord("1"));
  return st;
}

bool IsContextLost(const absl::Status& status) {
  return status.GetPayload(kContextLostPayload).has_value();
}

absl::Status GpuDevice::Enter() {
  if (lost_) return ContextLostError(absl::StrCat(Info().name, " (earlier failure)"));
  return MakeCurrent();
}

absl::Status GpuDevice::Enter(const DeviceBuffer& buffer, size_t offset, size_t bytes) {
  if (absl::Status st = CheckBufferRange(buffer, offset, bytes); !st.ok()) return st;
  return Enter();
}

absl::Status GpuDevice::Latch(absl::Status status) {
  if (IsContextLost(status)) {
    lost_ = true;
    spdlog::error("{} device {} ({}): {}", backend_, Info().index, Info().name, std::string(status.message()));
  }
  return status;
}

absl::StatusOr<TensorMapBytes> Device::EncodeTensorMap(const TensorMapSpec&, const DeviceBuffer&, size_t) {
  return absl::UnimplementedError(absl::StrCat(Info().name, ": no tensor copy engine (tensor maps are NVIDIA sm_90+)"));
}

}  // namespace tuna::backend
