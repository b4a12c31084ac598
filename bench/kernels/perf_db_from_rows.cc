// perf_db_from_rows OUT.db < rows: writes a MIOpen perf db (tuner_core/db PerfDbWriter) from
// tab-separated lines `solver<TAB>params<TAB>MIOpenDriver line` (one row per problem the line
// selects). A test fixture maker for kernels_bench --from-db; it is not how sessions export
// (that is exporter/), so a db made here is never "what tune -f found".
#include <cstdio>
#include <iostream>
#include <string>

#include "tuner_core/db/perf_db.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/problem/keys.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT.db < solver<TAB>params<TAB>driver-line ...\n", argv[0]);
    return 2;
  }
  tuna::db::PerfDbWriter w;
  std::string line;
  int n = 0;
  while (std::getline(std::cin, line)) {
    const size_t a = line.find('\t'), b = a == std::string::npos ? a : line.find('\t', a + 1);
    if (b == std::string::npos) {
      std::fprintf(stderr, "bad row (want solver<TAB>params<TAB>line): %s\n", line.c_str());
      return 2;
    }
    absl::StatusOr<std::vector<tuna::Problem>> ps = tuna::ParseDriverLine(line.substr(b + 1));
    if (!ps.ok()) {
      std::fprintf(stderr, "%s: %s\n", line.c_str(), std::string(ps.status().message()).c_str());
      return 2;
    }
    for (const tuna::Problem& p : *ps) {
      w.Add(tuna::ToPerfDbConfig(p), line.substr(0, a), line.substr(a + 1, b - a - 1));
      ++n;
    }
  }
  if (absl::Status st = w.Write(argv[1]); !st.ok()) {
    std::fprintf(stderr, "%s\n", std::string(st.message()).c_str());
    return 1;
  }
  std::printf("%d rows, %zu configs -> %s\n", n, w.config_count(), argv[1]);
  return 0;
}
