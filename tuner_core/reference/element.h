// Element types of host buffers (conv inputs/outputs) and scalar access to them as double,
// shared by the random fills and verification.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tuner_core/problem/problem.h"

namespace tuna::reference {

enum class ElementType { kFp32, kFp16, kBf16, kInt8, kInt32, kFp64 };

size_t ElementSize(ElementType t);
const char* ElementTypeName(ElementType t);

// The storage type of a problem's inputs.
ElementType StorageType(DataType t);
// The type of the buffer `direction` writes: the storage type, except int32 for INT8 forward.
ElementType OutputType(const Problem& p, Direction direction);

// Element i of `data` as double (exact for every type here).
double LoadAsDouble(ElementType t, const void* data, int64_t i);
// Stores v into element i with one round-to-nearest-even to the type (integers: rounded to
// nearest and saturated to the type's range; NaN stores 0).
void StoreFromDouble(ElementType t, void* data, int64_t i, double v);

}  // namespace tuna::reference
