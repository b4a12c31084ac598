#include "tuner_core/db/codec.h"

#include <bzlib.h>
#include <openssl/evp.h>

#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tuna::db {

absl::StatusOr<CompressedBlob> Bz2CompressLikeMiopen(std::string_view data) {
  if (data.size() >= std::numeric_limits<unsigned int>::max()) {
    return absl::InternalError("kernel blob too large for bzip2 buffer API");
  }
  CompressedBlob out;
  // libbz2 answers BZ_SEQUENCE_ERROR for a 0-byte output buffer; an empty object cannot shrink.
  if (data.empty()) return out;
  std::string dest(data.size(), '\0');
  auto dest_len = static_cast<unsigned int>(dest.size());
  int rc = BZ2_bzBuffToBuffCompress(dest.data(), &dest_len, const_cast<char*>(data.data()),
                                    static_cast<unsigned int>(data.size()), 9, 0, 30);
  if (rc == BZ_OUTBUFF_FULL) {
    out.bytes = std::string(data);
    out.uncompressed_size = 0;
    return out;
  }
  if (rc != BZ_OK) return absl::InternalError(absl::StrCat("bzip2 compression failed: ", rc));
  dest.resize(dest_len);
  out.bytes = std::move(dest);
  out.uncompressed_size = data.size();
  return out;
}

absl::StatusOr<std::string> Bz2DecompressLikeMiopen(std::string_view bytes,
                                                    uint64_t uncompressed_size) {
  if (uncompressed_size == 0) return std::string(bytes);
  if (uncompressed_size >= std::numeric_limits<unsigned int>::max() ||
      bytes.size() >= std::numeric_limits<unsigned int>::max()) {
    return absl::DataLossError("kernel blob sizes out of range");
  }
  std::string dest(uncompressed_size, '\0');
  auto dest_len = static_cast<unsigned int>(dest.size());
  int rc = BZ2_bzBuffToBuffDecompress(dest.data(), &dest_len, const_cast<char*>(bytes.data()),
                                      static_cast<unsigned int>(bytes.size()), 0, 0);
  if (rc != BZ_OK) return absl::DataLossError(absl::StrCat("bzip2 decompression failed: ", rc));
  if (dest_len != uncompressed_size) {
    return absl::DataLossError(absl::StrCat("decompressed ", dest_len, " bytes, expected ",
                                            uncompressed_size));
  }
  return dest;
}

std::string Md5Hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_md5(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 15]);
  }
  return out;
}

}  // namespace tuna::db
