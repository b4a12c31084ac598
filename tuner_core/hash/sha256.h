// Lowercase hex SHA-256 of bytes: config hashes, kernel content hashes and build keys, migration
// checksums.
#pragma once

#include <string>
#include <string_view>

namespace tuna::hash {

std::string Sha256Hex(std::string_view data);

}  // namespace tuna::hash
