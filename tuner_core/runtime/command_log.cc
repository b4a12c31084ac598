#include "tuner_core/runtime/command_log.h"

#include "absl/strings/str_cat.h"
#include "tuner_core/runtime/db_files.h"

namespace tuna::runtime {

std::string ConvArgsForDriver(const Problem& p, bool immediate) {
  std::string_view base = "conv";
  switch (p.data_type) {
    case DataType::kFp32: base = "conv"; break;
    case DataType::kFp16: base = "convfp16"; break;
    case DataType::kBf16: base = "convbfp16"; break;
    case DataType::kInt8: base = "convint8"; break;
  }
  const bool is3d = p.spatial_dims == 3;
  std::string s = absl::StrCat(std::string(base), " -n ", p.n, " -c ", p.c);
  if (is3d) absl::StrAppend(&s, " --in_d ", p.in[0]);
  absl::StrAppend(&s, " -H ", p.in[1], " -W ", p.in[2], " -k ", p.k);
  if (is3d) absl::StrAppend(&s, " --fil_d ", p.fil[0]);
  absl::StrAppend(&s, " -y ", p.fil[1], " -x ", p.fil[2]);
  if (is3d) absl::StrAppend(&s, " --pad_d ", p.pad[0]);
  absl::StrAppend(&s, " -p ", p.pad[1], " -q ", p.pad[2]);
  if (is3d) absl::StrAppend(&s, " --conv_stride_d ", p.stride[0]);
  absl::StrAppend(&s, " -u ", p.stride[1], " -v ", p.stride[2]);
  if (is3d) absl::StrAppend(&s, " --dilation_d ", p.dilation[0]);
  absl::StrAppend(&s, " -l ", p.dilation[1], " -j ", p.dilation[2]);
  if (is3d) absl::StrAppend(&s, " --spatial_dim 3");
  const Layout def = is3d ? Layout::kNCDHW : Layout::kNCHW;
  if (p.in_layout != def) absl::StrAppend(&s, " --in_layout ", std::string(LayoutName(p.in_layout)));
  if (p.fil_layout != def) absl::StrAppend(&s, " --fil_layout ", std::string(LayoutName(p.fil_layout)));
  if (p.out_layout != def) absl::StrAppend(&s, " --out_layout ", std::string(LayoutName(p.out_layout)));
  const int f = p.direction == Direction::kForward ? 1 : p.direction == Direction::kBackwardData ? 2 : 4;
  absl::StrAppend(&s, " -m ", p.mode == ConvMode::kTrans ? "trans" : "conv", " -g ", p.groups, " -F ", f, " -t 1");
  if (immediate) absl::StrAppend(&s, " -S 0");
  return s;
}

std::string LogCmdLine(backend::BackendKind kind, std::string_view function, const Problem& problem,
                       bool immediate) {
  return absl::StrCat("MIOpen(", std::string(BackendDbSuffix(kind)), "): Command [", std::string(function),
                      "] ./bin/MIOpenDriver ", ConvArgsForDriver(problem, immediate));
}

}  // namespace tuna::runtime
