// Writes 100k synthetic find-db records (4 entries each) and reads them back, timing both.
// Usage: find_db_bench [output path] (default: $TMPDIR or /tmp, find_db_bench.fdb.txt).
// Exit code 1 when the write takes 5 s or more (the target), 2 on an error.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tuner_core/db/find_db.h"

int main(int argc, char** argv) {
  using Clock = std::chrono::steady_clock;
  const char* tmp = std::getenv("TMPDIR");
  std::string path = argc > 1 ? argv[1]
                              : std::string(tmp != nullptr ? tmp : "/tmp") + "/find_db_bench.fdb.txt";
  constexpr int kRecords = 100000;
  const char* kSolvers[] = {"ConvBinWinogradRxSf2x3", "ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC",
                            "GemmFwdRest", "ConvDirectNaiveConvFwd", "ConvHipImplicitGemmFwdXdlops"};
  tuna::db::FindDb db;
  for (int i = 0; i < kRecords; ++i) {
    // Realistic 2D key shape: C-H-W-FxF-K-OH-OW-N-PxP-SxS-DxD-0-NCHW-FP32-F
    int c = 1 + i % 2048, hw = 7 + i % 224, k = 1 + (i * 7) % 2048, n = 1 + i % 256;
    std::string key = std::to_string(c) + "-" + std::to_string(hw) + "-" + std::to_string(hw) +
                      "-3x3-" + std::to_string(k) + "-" + std::to_string(hw) + "-" +
                      std::to_string(hw) + "-" + std::to_string(n) + "-1x1-1x1-1x1-0-NCHW-FP32-F_g" +
                      std::to_string(i);
    auto& entries = db[key];
    for (int e = 0; e < 4; ++e) {
      entries.push_back({kSolvers[(i + e) % 5], 0.01f * static_cast<float>((i * 31 + e * 17) % 9973),
                         static_cast<uint64_t>((i % 13) * 4096 * e),
                         "miopenConvolutionFwdAlgoImplicitGEMM"});
    }
  }
  auto t0 = Clock::now();
  absl::Status st = tuna::db::WriteFindDbFile(path, db, {.max_entries_per_key = 4});
  auto t1 = Clock::now();
  if (!st.ok()) {
    std::fprintf(stderr, "write failed: %s\n", st.ToString().c_str());
    return 2;
  }
  auto back = tuna::db::ReadFindDbFile(path);
  auto t2 = Clock::now();
  if (!back.ok() || back->records.size() != kRecords || !back->warnings.empty()) {
    std::fprintf(stderr, "read back failed\n");
    return 2;
  }
  double write_s = std::chrono::duration<double>(t1 - t0).count();
  double read_s = std::chrono::duration<double>(t2 - t1).count();
  std::printf("find_db_bench: %d records x 4 entries -> %s\n", kRecords, path.c_str());
  std::printf("write: %.3f s (target < 5 s)  read: %.3f s\n", write_s, read_s);
  std::remove(path.c_str());
  return write_s < 5.0 ? 0 : 1;
}
