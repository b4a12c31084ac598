// MIOpenDriver lines <-> Problems. Flag semantics follow MIOpen driver/conv_driver.hpp
// (AddCmdLineArgs, GetandSetData, SetConvDescriptorFromCmdLineArgs) and the logged form of
// src/driver_arguments.cpp (ConvArgsForMIOpenDriver); see MIOPEN_DB_FORMATS.md §5.5 and §6.
#include "tuner_core/problem/driver_line.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/status/status.h"
#include "tuner_core/problem/text_util.h"
#include "tuner_core/problem/driver_flags.h"

namespace tuna {
namespace {

using driver_flags::Field;

absl::Status Bad(std::string msg) { return absl::InvalidArgumentError(std::move(msg)); }

bool IsDriverPath(std::string_view tok) {
  const size_t slash = tok.find_last_of("/\\");
  const std::string_view base = slash == std::string_view::npos ? tok : tok.substr(slash + 1);
  return base == "MIOpenDriver" || base == "MIOpenDriver.exe";
}

// Tokens MIOpen's logging puts before the driver command: `miopenConvolutionForward:`,
// `MIOpen(HIP):`, `Command`, `[LogCmdConvolution]`.
bool IsLogPrefixToken(std::string_view tok) {
  if (tok == "Command") return true;
  if (tok.size() >= 2 && tok.front() == '[' && tok.back() == ']') return true;
  return tok.size() >= 2 && tok.back() == ':';
}

std::optional<DataType> BaseArgType(std::string_view tok) {
  if (tok == "conv") return DataType::kFp32;
  if (tok == "convfp16") return DataType::kFp16;
  if (tok == "convbfp16") return DataType::kBf16;
  if (tok == "convint8") return DataType::kInt8;
  return std::nullopt;
}

std::string_view BaseArgName(DataType t) {
  switch (t) {
    case DataType::kFp32: return "conv";
    case DataType::kFp16: return "convfp16";
    case DataType::kBf16: return "convbfp16";
    case DataType::kInt8: return "convint8";
  }
  return "conv";
}

// Raw flag values before spatial_dim is known (3D flags only apply when it is 3).
struct RawFlags {
  std::array<int64_t, static_cast<size_t>(Field::kCount)> ints{};
  std::string in_layout, out_layout, fil_layout;  // empty = default for spatial_dim
  std::string mode = "conv";
  std::string pad_mode = "default";

  RawFlags() {
    auto set = [this](Field f, int64_t v) { ints[static_cast<size_t>(f)] = v; };
    set(Field::kSpatialDim, 2), set(Field::kForw, 0), set(Field::kBatch, 100);
    set(Field::kInC, 3), set(Field::kInD, 32), set(Field::kInH, 32), set(Field::kInW, 32);
    set(Field::kOutC, 32), set(Field::kFilD, 3), set(Field::kFilH, 3), set(Field::kFilW, 3);
    set(Field::kStrideD, 1), set(Field::kStrideH, 1), set(Field::kStrideW, 1);
    set(Field::kPadD, 0), set(Field::kPadH, 0), set(Field::kPadW, 0);
    set(Field::kTransPadD, 0), set(Field::kTransPadH, 0), set(Field::kTransPadW, 0);
    set(Field::kDilD, 1), set(Field::kDilH, 1), set(Field::kDilW, 1);
    set(Field::kGroups, 1);
  }
  int64_t Get(Field f) const { return ints[static_cast<size_t>(f)]; }
};

absl::StatusOr<Layout> ParseLayout(std::string_view flag, const std::string& value,
                                   int spatial_dims) {
  if (value.empty()) return spatial_dims == 3 ? Layout::kNCDHW : Layout::kNCHW;
  // A 2D name on a 3D problem means the same memory order (legacy MIOpen 3D rows say NCHW).
  if (value == "NCHW") return spatial_dims == 3 ? Layout::kNCDHW : Layout::kNCHW;
  if (value == "NHWC") return spatial_dims == 3 ? Layout::kNDHWC : Layout::kNHWC;
  if (value == "NCDHW" || value == "NDHWC") {
    if (spatial_dims != 3) {
      return Bad(text::Cat(flag, " ", value, " needs --spatial_dim 3"));
    }
    return value == "NCDHW" ? Layout::kNCDHW : Layout::kNDHWC;
  }
  return Bad(text::Cat(flag, " ", text::Quote(value),
                          " is not a supported layout (NCHW, NHWC, NCDHW, NDHWC)"));
}

// -z/--pad_mode as MIOpenDriver applies it (conv_driver.hpp SetConvDescriptorFromCmdLineArgs):
// in conv mode (trans mode ignores it) with every dilation 1 or every filter 1, "same" replaces
// the pads with (f - (in % s ? in % s : s)) / 2 and "valid" with 0, whatever -p/-q said. The descriptor keeps
// the default mode, so the problem is a default-mode one whenever those pads give the mode's
// size (ceil(in / s) for same). Where they cannot (MIOpenDriver would then run a smaller output)
// the problem keeps the mode, as MIOpen's API does with miopenPaddingSame: the shape of the
// shipped find dbs' pad-mode-same keys. ToDriverLine prints such a problem with `-z same`.
absl::Status ApplyPadMode(const std::string& pad_mode, Problem& p) {
  if (pad_mode == "default") return absl::OkStatus();
  if (pad_mode != "same" && pad_mode != "valid") {
    return Bad(text::Cat("-z/--pad_mode ", text::Quote(pad_mode),
                            " is not one of default, same, valid"));
  }
  if (p.mode == ConvMode::kTrans) return absl::OkStatus();  // MIOpenDriver ignores -z in trans mode
  const int first = p.spatial_dims == 3 ? 0 : 1;
  bool dilation_one = true, filter_one = true;
  for (int i = first; i < 3; ++i) {
    if (p.stride[i] <= 0 || p.in[i] <= 0 || p.fil[i] <= 0) return absl::OkStatus();  // reported
    dilation_one = dilation_one && p.dilation[i] == 1;
    filter_one = filter_one && p.fil[i] == 1;
  }
  if (!dilation_one && !filter_one) return absl::OkStatus();  // MIOpenDriver ignores -z here
  p.pad_mode = pad_mode == "same" ? PadMode::kSame : PadMode::kValid;
  p.pad = pad_mode == "same" ? SamePads(p) : Dhw{0, 0, 0};
  p.pad_mode = NormalizedPadMode(p);  // default with a dilation other than 1 (MIOpen's rule)
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<Problem>> ParseDriverLine(std::string_view line,
                                                     const ProblemLimits& limits) {
  const std::vector<std::string_view> tokens = text::SplitWhitespace(line);
  if (tokens.empty()) return Bad("empty driver line");

  // Skip `./bin/MIOpenDriver` and whatever log prefix stands before it.
  size_t i = 0;
  for (size_t j = 0; j < tokens.size() && !BaseArgType(tokens[j]); ++j) {
    if (IsDriverPath(tokens[j])) {
      i = j + 1;
      break;
    }
  }
  if (i == 0) {
    while (i < tokens.size() && !BaseArgType(tokens[i]) && IsLogPrefixToken(tokens[i])) ++i;
  }
  if (i >= tokens.size()) return Bad("missing the driver command (conv, convfp16, ...)");
  const std::optional<DataType> type = BaseArgType(tokens[i]);
  if (!type) {
    return Bad(text::Cat("unsupported MIOpenDriver command ", text::Quote(tokens[i]),
                            " (expected conv, convfp16, convbfp16 or convint8)"));
  }
  ++i;

  RawFlags raw;
  for (; i < tokens.size(); ++i) {
    const std::string_view tok = tokens[i];
    const std::optional<driver_flags::FlagInfo> flag = driver_flags::FindFlag(tok);
    if (!flag) {
      if (!tok.empty() && tok[0] == '-') return Bad(text::Cat("unknown flag ", text::Quote(tok)));
      return Bad(text::Cat("unexpected argument ", text::Quote(tok),
                              " (flags are -x VALUE or --name VALUE)"));
    }
    const std::string name =
        text::Cat("-", std::string(1, flag->short_name), "/--", flag->long_name);
    if (i + 1 >= tokens.size()) return Bad(text::Cat("flag ", name, " is missing its value"));
    const std::string_view value = tokens[++i];
    switch (flag->field) {
      case Field::kIgnored: break;
      case Field::kInLayout: raw.in_layout = std::string(value); break;
      case Field::kOutLayout: raw.out_layout = std::string(value); break;
      case Field::kFilLayout: raw.fil_layout = std::string(value); break;
      case Field::kMode: raw.mode = std::string(value); break;
      case Field::kPadMode: raw.pad_mode = std::string(value); break;
      default: {
        int64_t v = 0;
        if (!text::ParseInt64(value, &v)) {
          return Bad(text::Cat("flag ", name, " value ", text::Quote(value),
                                  " is not an integer in the int64 range"));
        }
        if (flag->field == Field::kSpatialDim && v != 2 && v != 3) {
          return Bad(text::Cat("flag ", name, " value ", v, " must be 2 or 3"));
        }
        if (flag->field == Field::kForw && (v < 0 || v > 7)) {
          return Bad(text::Cat("flag ", name, " value ", v,
                                  " is not a direction mask (0 = all, 1 F, 2 B, 4 W, sums)"));
        }
        raw.ints[static_cast<size_t>(flag->field)] = v;
      }
    }
  }

  Problem p;
  const bool is3d = raw.Get(Field::kSpatialDim) == 3;
  p.spatial_dims = is3d ? 3 : 2;
  p.data_type = *type;
  p.n = raw.Get(Field::kBatch);
  p.c = raw.Get(Field::kInC);
  p.k = raw.Get(Field::kOutC);
  p.groups = raw.Get(Field::kGroups);
  auto dhw = [&](Field d, Field h, Field w, int64_t flat_d) -> Dhw {
    return {is3d ? raw.Get(d) : flat_d, raw.Get(h), raw.Get(w)};
  };
  p.in = dhw(Field::kInD, Field::kInH, Field::kInW, 1);
  p.fil = dhw(Field::kFilD, Field::kFilH, Field::kFilW, 1);
  p.pad = dhw(Field::kPadD, Field::kPadH, Field::kPadW, 0);
  p.stride = dhw(Field::kStrideD, Field::kStrideH, Field::kStrideW, 1);
  p.dilation = dhw(Field::kDilD, Field::kDilH, Field::kDilW, 1);

  if (raw.mode == "conv") {
    p.mode = ConvMode::kConv;  // trans_output_pad flags have no meaning here: ignored
  } else if (raw.mode == "trans") {
    p.mode = ConvMode::kTrans;
    p.trans_output_pad = dhw(Field::kTransPadD, Field::kTransPadH, Field::kTransPadW, 0);
  } else {
    return Bad(text::Cat("flag -m/--mode value ", text::Quote(raw.mode), " is not conv or trans"));
  }

  auto in_layout = ParseLayout("-I/--in_layout", raw.in_layout, p.spatial_dims);
  if (!in_layout.ok()) return in_layout.status();
  auto fil_layout = ParseLayout("-f/--fil_layout", raw.fil_layout, p.spatial_dims);
  if (!fil_layout.ok()) return fil_layout.status();
  auto out_layout = ParseLayout("-O/--out_layout", raw.out_layout, p.spatial_dims);
  if (!out_layout.ok()) return out_layout.status();
  p.in_layout = *in_layout, p.fil_layout = *fil_layout, p.out_layout = *out_layout;

  if (auto st = ApplyPadMode(raw.pad_mode, p); !st.ok()) return st;
  if (auto st = ValidateProblem(p, limits); !st.ok()) return st;

  // MIOpen: is_fwd = F == 0 || F & 1, is_bwd = F == 0 || F & 2, is_wrw = F == 0 || F & 4.
  const int64_t forw = raw.Get(Field::kForw);
  std::vector<Problem> out;
  const std::pair<int64_t, Direction> dirs[] = {{1, Direction::kForward},
                                                {2, Direction::kBackwardData},
                                                {4, Direction::kBackwardWeights}};
  for (const auto& [bit, dir] : dirs) {
    if (forw == 0 || (forw & bit) != 0) {
      p.direction = dir;
      out.push_back(p);
    }
  }
  return out;
}

DriverFile ParseDriverText(std::string_view contents, const ProblemLimits& limits) {
  DriverFile file;
  int number = 0;
  for (std::string_view line : text::Split(contents, '\n')) {
    ++number;
    const std::string_view trimmed = text::Strip(line);
    if (trimmed.empty() || trimmed[0] == '#') continue;
    auto problems = ParseDriverLine(trimmed, limits);
    if (problems.ok()) {
      file.lines.push_back({number, std::string(trimmed), *std::move(problems)});
    } else {
      file.errors.push_back(
          {number, std::string(trimmed), std::string(problems.status().message())});
    }
  }
  return file;
}

absl::StatusOr<DriverFile> ParseDriverFile(const std::string& path, const ProblemLimits& limits) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(text::Cat(path, " is a directory"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    const std::string msg = text::Cat("cannot read ", path, ": ", std::strerror(err));
    if (err == EACCES) return absl::PermissionDeniedError(msg);
    if (err == ENOENT) return absl::NotFoundError(msg);
    return absl::UnavailableError(msg);
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::UnavailableError(text::Cat("error reading ", path));
  return ParseDriverText(ss.str(), limits);
}

// Canonical form: MIOpen's LogCmd order (src/driver_arguments.cpp), always with the driver
// path, `-F` of the single direction and `-t 1`. The three layout flags are printed together
// whenever any layout differs from the default (NCHW 2D / NCDHW 3D), never otherwise. For
// -m trans the output-padding flags follow `-m trans`; a pad mode other than default (which
// only a mode that changes the output size keeps, problem.h) follows `-m conv` as `-z MODE`.
std::string ToDriverLine(const Problem& p) {
  const bool is3d = p.spatial_dims == 3;
  std::string s = text::Cat("./bin/MIOpenDriver ", BaseArgName(p.data_type), " -n ", p.n,
                               " -c ", p.c);
  if (is3d) text::Append(s, " --in_d ", p.in[0]);
  text::Append(s, " -H ", p.in[1], " -W ", p.in[2], " -k ", p.k);
  if (is3d) text::Append(s, " --fil_d ", p.fil[0]);
  text::Append(s, " -y ", p.fil[1], " -x ", p.fil[2]);
  if (is3d) text::Append(s, " --pad_d ", p.pad[0]);
  text::Append(s, " -p ", p.pad[1], " -q ", p.pad[2]);
  if (is3d) text::Append(s, " --conv_stride_d ", p.stride[0]);
  text::Append(s, " -u ", p.stride[1], " -v ", p.stride[2]);
  if (is3d) text::Append(s, " --dilation_d ", p.dilation[0]);
  text::Append(s, " -l ", p.dilation[1], " -j ", p.dilation[2]);
  if (is3d) text::Append(s, " --spatial_dim 3");
  const Layout def = is3d ? Layout::kNCDHW : Layout::kNCHW;
  if (p.in_layout != def || p.fil_layout != def || p.out_layout != def) {
    text::Append(s, " --in_layout ", LayoutName(p.in_layout), " --fil_layout ",
                    LayoutName(p.fil_layout), " --out_layout ", LayoutName(p.out_layout));
  }
  if (p.mode == ConvMode::kTrans) {
    text::Append(s, " -m trans");
    if (is3d) text::Append(s, " --trans_output_pad_d ", p.trans_output_pad[0]);
    text::Append(s, " -Y ", p.trans_output_pad[1], " -X ", p.trans_output_pad[2]);
  } else {
    text::Append(s, " -m conv");
    if (p.pad_mode != PadMode::kDefault) text::Append(s, " -z ", PadModeName(p.pad_mode));
  }
  const int forw = p.direction == Direction::kForward        ? 1
                   : p.direction == Direction::kBackwardData ? 2
                                                             : 4;
  text::Append(s, " -g ", p.groups, " -F ", forw, " -t 1");
  return s;
}

std::string Problem::Canonical() const { return ToDriverLine(*this); }

}  // namespace tuna
