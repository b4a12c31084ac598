// Blob encoding of MIOpen's kernel db: bzip2 exactly as MIOpen src/bz2.cpp, md5 as src/md5.cpp.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tuna::db {

struct CompressedBlob {
  std::string bytes;              // what goes into kern_db.kernel_blob
  uint64_t uncompressed_size = 0; // 0 = `bytes` is the raw object (compression did not shrink it)
};

// BZ2_bzBuffToBuffCompress(blockSize100k 9, verbosity 0, workFactor 30) into a buffer as large as
// the input; BZ_OUTBUFF_FULL means "store raw" (uncompressed_size = 0), as MIOpen does. Internal
// for other bzip2 errors or inputs >= 4 GiB. An empty input is stored raw (libbz2 refuses a
// 0-byte output buffer).
absl::StatusOr<CompressedBlob> Bz2CompressLikeMiopen(std::string_view data);

// Inverse: raw bytes when uncompressed_size == 0, else BZ2_bzBuffToBuffDecompress into exactly
// uncompressed_size bytes. DataLoss when the stream is bad or its length differs.
absl::StatusOr<std::string> Bz2DecompressLikeMiopen(std::string_view bytes,
                                                    uint64_t uncompressed_size);

// Lowercase hex md5 (32 characters) via OpenSSL EVP.
std::string Md5Hex(std::string_view data);

}  // namespace tuna::db
