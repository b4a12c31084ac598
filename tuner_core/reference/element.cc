#include "tuner_core/reference/element.h"

#include <cmath>
#include <limits>

#include "tuner_core/numeric/bf16.h"
#include "tuner_core/numeric/fp16.h"
#include "tuner_core/numeric/round_to_odd.h"

namespace tuna::reference {
namespace {

template <typename I>
I SaturateRound(double v) {
  if (std::isnan(v)) return 0;
  const double r = std::nearbyint(v);  // default rounding mode: nearest-even
  if (r <= double(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (r >= double(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(r);
}

}  // namespace

size_t ElementSize(ElementType t) {
  switch (t) {
    case ElementType::kFp32: return 4;
    case ElementType::kFp16: return 2;
    case ElementType::kBf16: return 2;
    case ElementType::kInt8: return 1;
    case ElementType::kInt32: return 4;
    case ElementType::kFp64: return 8;
  }
  return 0;
}

const char* ElementTypeName(ElementType t) {
  switch (t) {
    case ElementType::kFp32: return "fp32";
    case ElementType::kFp16: return "fp16";
    case ElementType::kBf16: return "bf16";
    case ElementType::kInt8: return "int8";
    case ElementType::kInt32: return "int32";
    case ElementType::kFp64: return "fp64";
  }
  return "?";
}

ElementType StorageType(DataType t) {
  switch (t) {
    case DataType::kFp32: return ElementType::kFp32;
    case DataType::kFp16: return ElementType::kFp16;
    case DataType::kBf16: return ElementType::kBf16;
    case DataType::kInt8: return ElementType::kInt8;
  }
  return ElementType::kFp32;
}

ElementType OutputType(const Problem& p, Direction direction) {
  if (p.data_type == DataType::kInt8 && direction == Direction::kForward) {
    return ElementType::kInt32;
  }
  return StorageType(p.data_type);
}

double LoadAsDouble(ElementType t, const void* data, int64_t i) {
  switch (t) {
    case ElementType::kFp32: return static_cast<const float*>(data)[i];
    case ElementType::kFp16: return static_cast<const Fp16*>(data)[i].ToFloat();
    case ElementType::kBf16: return static_cast<const Bf16*>(data)[i].ToFloat();
    case ElementType::kInt8: return static_cast<const int8_t*>(data)[i];
    case ElementType::kInt32: return static_cast<const int32_t*>(data)[i];
    case ElementType::kFp64: return static_cast<const double*>(data)[i];
  }
  return 0;
}

void StoreFromDouble(ElementType t, void* data, int64_t i, double v) {
  switch (t) {
    case ElementType::kFp32: static_cast<float*>(data)[i] = static_cast<float>(v); return;
    case ElementType::kFp16:
      static_cast<Fp16*>(data)[i] = Fp16::FromBits(DoubleToFp16Bits(v));
      return;
    case ElementType::kBf16:
      static_cast<Bf16*>(data)[i] = Bf16::FromBits(DoubleToBf16Bits(v));
      return;
    case ElementType::kInt8: static_cast<int8_t*>(data)[i] = SaturateRound<int8_t>(v); return;
    case ElementType::kInt32: static_cast<int32_t*>(data)[i] = SaturateRound<int32_t>(v); return;
    case ElementType::kFp64: static_cast<double*>(data)[i] = v; return;
  }
}

}  // namespace tuna::reference
