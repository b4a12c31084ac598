// MIOpen's serialized problem forms. Sources (MIOpen develop 2d1fd997, see
// /work/shared/research/MIOPEN_DB_FORMATS.md §1.3, §1.5, §2.2):
//  - find-db key: conv::ProblemDescription::Serialize in src/conv/problem_description.cpp
//    (PrintDHW, layout rule, "_g" suffix);
//  - perf-db columns: conv::ProblemDescription::Visit in
//    src/include/miopen/conv/problem_description.hpp (GetNCDHW puts 1 in the 2D depth,
//    GetDHW puts 0 for pad/stride/dilation depth);
//  - tensor roles per direction: MakeFwdCtxAndProblem / MakeBwdCtxAndProblem /
//    MakeWrWCtxAndProblem in src/convolution_api.cpp and src/ocl/convolutionocl.cpp
//    (B and W put dy first; transpose mode swaps Forward with BackwardData and x with y).
#include "tuner_core/problem/keys.h"

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "tuner_core/problem/text_util.h"
#include "tuner_core/problem/validate.h"

namespace tuna {
namespace {

absl::Status Bad(std::string msg) { return absl::InvalidArgumentError(std::move(msg)); }

// The MIOpen problem's view of one tensor: channels, spatial extents (D, H, W), layout.
struct Role {
  int64_t channels = 0;
  Dhw spatial{};
  Layout layout = Layout::kNCHW;
};

// "in"/"out" tensors of MIOpen's ProblemDescription and the direction it is filed under.
struct Roles {
  Direction key_direction;
  Role in, out;
};

Roles RolesOf(const Problem& p) {
  const Role x{p.c, p.in, p.in_layout};
  const Role y{p.k, p.Out(), p.out_layout};
  if (p.mode == ConvMode::kConv) {
    if (p.direction == Direction::kForward) return {Direction::kForward, x, y};
    return {p.direction, y, x};  // B: (dy, w, dx); W: (dy, dw, x)
  }
  // Transpose: forward runs as BackwardData with x first, backward data as Forward with dy
  // first, backward weights keeps x first.
  switch (p.direction) {
    case Direction::kForward: return {Direction::kBackwardData, x, y};
    case Direction::kBackwardData: return {Direction::kForward, y, x};
    case Direction::kBackwardWeights: return {Direction::kBackwardWeights, x, y};
  }
  return {p.direction, x, y};
}

// PrintDHW: "d s h s w" for 3D, "h s w" for 2D.
std::string Dhw3(const Dhw& v, int spatial_dims, char sep) {
  if (spatial_dims == 3) return text::Cat(v[0], sep, v[1], sep, v[2]);
  return text::Cat(v[1], sep, v[2]);
}

std::optional<Direction> ParseDirection(std::string_view s) {
  if (s == "F") return Direction::kForward;
  if (s == "B") return Direction::kBackwardData;
  if (s == "W") return Direction::kBackwardWeights;
  return std::nullopt;
}

// MIOpen's EncodeDataTypesForKey(in, weights, out) for tuna's types. tuna's INT8 convolution
// is MIOpen's convint8: x and w INT8, the forward y INT32 (conv_driver.hpp's y_type): its key
// says INT8INT8INT32. Keys and rows filed under F say so for every INT8 problem (a transpose
// backward-data one too), the others say INT8 (MIOpenDriver runs no INT8 backward), so that a
// key or row always reads back as a problem with the same key.
std::string KeyDataType(const Problem& p, Direction key_direction) {
  if (p.data_type != DataType::kInt8) return std::string(DataTypeName(p.data_type));
  return key_direction == Direction::kForward ? "INT8INT8INT32" : "INT8";
}

// A key's data type: MIOpen's EncodeDataTypesForKey (one name when the three tensors agree,
// else in+weights+out) for the types tuna has. "INT8" alone is the spelling of MIOpen releases
// before the INT32 output was recorded (every INT8 key of the shipped gfx906/gfx908/gfx90a find
// dbs); it is read as the same problem as "INT8INT8INT32".
std::optional<DataType> ParseDataType(std::string_view s) {
  if (s == "FP32") return DataType::kFp32;
  if (s == "FP16") return DataType::kFp16;
  if (s == "BF16") return DataType::kBf16;
  if (s == "INT8" || s == "INT8INT8INT32") return DataType::kInt8;
  return std::nullopt;
}

// A layout name of a `spatial_dims` key or row. 3D keys and rows of older MIOpen releases say
// NCHW / NHWC (gfx803_36, gfx900_56, gfx906_64 dbs): read as NCDHW / NDHWC.
std::optional<Layout> ParseLayoutName(std::string_view s, int spatial_dims) {
  if (s == "NCHW") return spatial_dims == 2 ? Layout::kNCHW : Layout::kNCDHW;
  if (s == "NHWC") return spatial_dims == 2 ? Layout::kNHWC : Layout::kNDHWC;
  if (spatial_dims == 3) {
    if (s == "NCDHW") return Layout::kNCDHW;
    if (s == "NDHWC") return Layout::kNDHWC;
  }
  return std::nullopt;
}

// A decimal as MIOpen prints it: digits only, no sign, no leading zeros, bounded.
bool ParseCanonicalInt(std::string_view s, int64_t* v) {
  if (s.empty() || s.size() > 15) return false;
  for (char ch : s)
    if (ch < '0' || ch > '9') return false;
  if (s.size() > 1 && s[0] == '0') return false;
  return text::ParseInt64(s, v);
}

absl::Status ParseInt(std::string_view what, std::string_view s, int64_t* v) {
  if (!ParseCanonicalInt(s, v)) return Bad(text::Cat(what, " ", text::Quote(s), " is not a number"));
  return absl::OkStatus();
}

// An "HxW" / "DxHxW" token into Dhw (2D depth = `flat_d`). `legacy_hw`: a 3D key may give
// only "HxW" (the pads of 3D keys in older MIOpen releases); the depth is then `flat_d`.
absl::Status ParseXTriple(std::string_view what, std::string_view tok, int spatial_dims,
                          int64_t flat_d, Dhw* out, bool legacy_hw = false) {
  std::vector<std::string_view> parts = text::Split(tok, 'x');
  if (legacy_hw && spatial_dims == 3 && parts.size() == 2) {
    Dhw v{flat_d, 0, 0};
    for (int i = 0; i < 2; ++i) {
      if (auto st = ParseInt(what, parts[i], &v[1 + i]); !st.ok()) return st;
    }
    *out = v;
    return absl::OkStatus();
  }
  if (static_cast<int>(parts.size()) != spatial_dims) {
    return Bad(text::Cat(what, " ", text::Quote(tok), " must have ", spatial_dims,
                            " values joined by 'x'"));
  }
  Dhw v{flat_d, 0, 0};
  for (int i = 0; i < spatial_dims; ++i) {
    if (auto st = ParseInt(what, parts[i], &v[3 - spatial_dims + i]); !st.ok()) return st;
  }
  *out = v;
  return absl::OkStatus();
}

// Builds the forward-terms problem from MIOpen's (in, out) roles, checks it and finds the pad
// mode whose output size is the stored one: default first (MIOpen's clamp included), then same,
// then valid (keys do not record the mode; problem.h).
absl::StatusOr<Problem> FromRoles(Problem p, Direction key_dir, const Role& in, const Role& out,
                                  const Dhw& fil) {
  p.mode = ConvMode::kConv;
  p.pad_mode = PadMode::kDefault;
  p.direction = key_dir;
  const Role& x = key_dir == Direction::kForward ? in : out;
  const Role& y = key_dir == Direction::kForward ? out : in;
  p.c = x.channels;
  p.k = y.channels;
  p.in = x.spatial;
  p.fil = fil;
  p.in_layout = x.layout;
  p.out_layout = y.layout;
  if (auto st = ValidateProblem(p); !st.ok()) return st;
  if (p.Out() == y.spatial) return p;
  const Dhw default_out = p.Out();
  for (PadMode mode : {PadMode::kSame, PadMode::kValid}) {
    Problem q = p;
    q.pad_mode = mode;
    if (NormalizedPadMode(q) == mode && q.Out() == y.spatial && ValidateProblem(q).ok()) return q;
  }
  return Bad(text::Cat("output size ", Dhw3(y.spatial, p.spatial_dims, 'x'), " does not match ",
                       Dhw3(default_out, p.spatial_dims, 'x'), " computed from the input ",
                       Dhw3(p.in, p.spatial_dims, 'x'), " (nor pad mode same or valid)"));
}

}  // namespace

std::string FindDbKey(const Problem& p) {
  const Roles r = RolesOf(p);
  const int sd = p.spatial_dims;
  const Layout def = sd == 3 ? Layout::kNCDHW : Layout::kNCHW;
  std::string layout;
  if (r.in.layout == def && p.fil_layout == def && r.out.layout == def) {
    layout = std::string(LayoutName(def));
  } else {
    layout = text::Cat(LayoutName(r.in.layout), "-", LayoutName(p.fil_layout), "-",
                          LayoutName(r.out.layout));
  }
  std::string key = text::Cat(
      r.in.channels, "-", Dhw3(r.in.spatial, sd, '-'), "-", Dhw3(p.fil, sd, 'x'), "-",
      r.out.channels, "-", Dhw3(r.out.spatial, sd, '-'), "-", p.n, "-", Dhw3(p.pad, sd, 'x'), "-",
      Dhw3(p.stride, sd, 'x'), "-", Dhw3(p.dilation, sd, 'x'), "-0-", layout, "-",
      KeyDataType(p, r.key_direction), "-", DirectionName(r.key_direction));
  if (p.groups != 1) text::Append(key, "_g", p.groups);
  return key;
}

absl::StatusOr<Problem> ParseFindDbKey(std::string_view key) {
  if (key.empty()) return Bad("empty find-db key");
  if (key.size() > 512) return Bad(text::Cat("find-db key too long (", key.size(), " bytes)"));
  std::string_view main = key;
  int64_t groups = 1;
  if (const size_t us = key.find('_'); us != std::string_view::npos) {
    main = key.substr(0, us);
    const std::string_view suffix = key.substr(us + 1);
    if (suffix.size() < 2 || suffix[0] != 'g') {
      return Bad(text::Cat("unsupported key suffix ", text::Quote(key.substr(us)),
                              " (only _g<groups>)"));
    }
    if (!ParseCanonicalInt(suffix.substr(1), &groups) || groups < 2) {
      return Bad(text::Cat("group suffix ", text::Quote(key.substr(us)),
                              " is not _g<count> with count >= 2"));
    }
  }
  std::vector<std::string_view> t = text::Split(main, '-');
  // 2D: C H W FHxFW K OH OW N pads strides dils bias; 3D adds D to each spatial group.
  int sd = 0;
  if (t.size() > 3 && t[3].find('x') != std::string_view::npos) sd = 2;
  if (t.size() > 4 && t[4].find('x') != std::string_view::npos) sd = 3;
  if (sd == 0) return Bad(text::Cat("find-db key ", text::Quote(key), " has no filter field"));
  const size_t numeric = sd == 3 ? 14 : 12;
  if (t.size() != numeric + 3 && t.size() != numeric + 5) {
    return Bad(text::Cat("find-db key ", text::Quote(key), " has ", t.size(), " '-' fields, expected ",
                            numeric + 3, " or ", numeric + 5, " for ", sd, "D"));
  }
  size_t i = 0;
  auto read_int = [&](std::string_view what, int64_t* v) { return ParseInt(what, t[i++], v); };
  auto read_dashed = [&](std::string_view what, int64_t flat_d, Dhw* v) -> absl::Status {
    *v = {flat_d, 0, 0};
    for (int a = 3 - sd; a < 3; ++a) {
      if (auto st = ParseInt(what, t[i++], &(*v)[a]); !st.ok()) return st;
    }
    return absl::OkStatus();
  };
  auto read_x = [&](std::string_view what, int64_t flat_d, Dhw* v) {
    return ParseXTriple(what, t[i++], sd, flat_d, v);
  };
  Role in, out;
  Dhw fil{}, pad{}, stride{}, dil{};
  int64_t n = 0, bias = 0;
  absl::Status st;
  if (!(st = read_int("in channels", &in.channels)).ok()) return st;
  if (!(st = read_dashed("in size", 1, &in.spatial)).ok()) return st;
  if (!(st = read_x("filter", 1, &fil)).ok()) return st;
  if (!(st = read_int("out channels", &out.channels)).ok()) return st;
  if (!(st = read_dashed("out size", 1, &out.spatial)).ok()) return st;
  if (!(st = read_int("batch", &n)).ok()) return st;
  if (!(st = ParseXTriple("pads", t[i++], sd, 0, &pad, /*legacy_hw=*/true)).ok()) return st;
  if (!(st = read_x("strides", 1, &stride)).ok()) return st;
  if (!(st = read_x("dilations", 1, &dil)).ok()) return st;
  if (!(st = read_int("bias", &bias)).ok()) return st;
  if (bias != 0) return Bad(text::Cat("bias ", bias, " is not 0 (convolution keys)"));

  Layout fil_layout;
  const Layout def = sd == 3 ? Layout::kNCDHW : Layout::kNCHW;
  if (t.size() == numeric + 3) {
    // MIOpen prints a single token only when all three tensors are NCHW / NCDHW (older
    // releases printed NCHW for 3D keys too).
    if (ParseLayoutName(t[i], sd) != def) {
      return Bad(text::Cat("layout ", text::Quote(t[i]), " must be ", LayoutName(def),
                              " or in-wei-out for a ", sd, "D key"));
    }
    in.layout = out.layout = fil_layout = def;
    ++i;
  } else {
    Layout* slots[3] = {&in.layout, &fil_layout, &out.layout};
    for (Layout* slot : slots) {
      auto l = ParseLayoutName(t[i], sd);
      if (sd == 3 && (t[i] == "NCHW" || t[i] == "NHWC")) l.reset();  // only single-token legacy
      if (!l) {
        return Bad(text::Cat("layout ", text::Quote(t[i]), " is not a ", sd, "D layout"));
      }
      *slot = *l;
      ++i;
    }
    if (in.layout == def && fil_layout == def && out.layout == def) {
      return Bad(text::Cat("layout ", LayoutName(def), "-", LayoutName(def), "-",
                              LayoutName(def), " is written as ", LayoutName(def), " by MIOpen"));
    }
  }
  const std::optional<DataType> type = ParseDataType(t[i]);
  if (!type) {
    return Bad(text::Cat("data type ", text::Quote(t[i]),
                         " is not FP32, FP16, BF16, INT8 or INT8INT8INT32"));
  }
  ++i;
  const std::optional<Direction> dir = ParseDirection(t[i]);
  if (!dir) return Bad(text::Cat("direction ", text::Quote(t[i]), " is not F, B or W"));

  Problem p;
  p.spatial_dims = sd;
  p.n = n;
  p.groups = groups;
  p.pad = pad;
  p.stride = stride;
  p.dilation = dil;
  p.data_type = *type;
  p.fil_layout = fil_layout;
  return FromRoles(p, *dir, in, out, fil);
}

PerfDbConfig ToPerfDbConfig(const Problem& p) {
  const Roles r = RolesOf(p);
  const bool is3d = p.spatial_dims == 3;
  PerfDbConfig c;
  c.layout = std::string(LayoutName(r.in.layout));
  c.data_type = KeyDataType(p, r.key_direction);
  c.direction = std::string(DirectionName(r.key_direction));
  c.spatial_dim = p.spatial_dims;
  c.in_channels = r.in.channels;
  c.in_d = is3d ? r.in.spatial[0] : 1;
  c.in_h = r.in.spatial[1];
  c.in_w = r.in.spatial[2];
  c.fil_d = is3d ? p.fil[0] : 1;
  c.fil_h = p.fil[1];
  c.fil_w = p.fil[2];
  c.out_channels = r.out.channels;
  c.batchsize = p.n;
  c.pad_d = is3d ? p.pad[0] : 0;
  c.pad_h = p.pad[1];
  c.pad_w = p.pad[2];
  c.conv_stride_d = is3d ? p.stride[0] : 0;
  c.conv_stride_h = p.stride[1];
  c.conv_stride_w = p.stride[2];
  c.dilation_d = is3d ? p.dilation[0] : 0;
  c.dilation_h = p.dilation[1];
  c.dilation_w = p.dilation[2];
  c.bias = 0;
  c.group_count = p.groups;
  return c;
}

absl::StatusOr<Problem> FromPerfDbConfig(const PerfDbConfig& c) {
  if (c.spatial_dim != 2 && c.spatial_dim != 3) {
    return Bad(text::Cat("spatial_dim ", c.spatial_dim, " is not 2 or 3"));
  }
  const int sd = static_cast<int>(c.spatial_dim);
  if (sd == 2 && (c.in_d != 1 || c.fil_d != 1 || c.pad_d != 0 || c.conv_stride_d != 0 ||
                  c.dilation_d != 0)) {
    return Bad(text::Cat("2D row must have in_d=fil_d=1 and pad_d=conv_stride_d=dilation_d=0 "
                            "(got ",
                            c.in_d, ", ", c.fil_d, ", ", c.pad_d, ", ", c.conv_stride_d, ", ",
                            c.dilation_d, ")"));
  }
  if (c.bias != 0) return Bad(text::Cat("bias ", c.bias, " is not 0"));
  const std::optional<Layout> layout = ParseLayoutName(c.layout, sd);
  if (!layout) return Bad(text::Cat("layout ", text::Quote(c.layout), " is not a ", sd, "D layout"));
  const std::optional<DataType> type = ParseDataType(c.data_type);
  if (!type) {
    return Bad(text::Cat("data_type ", text::Quote(c.data_type),
                         " is not FP32, FP16, BF16, INT8 or INT8INT8INT32"));
  }
  const std::optional<Direction> dir = ParseDirection(c.direction);
  if (!dir) return Bad(text::Cat("direction ", text::Quote(c.direction), " is not F, B or W"));

  // Bound every column before any arithmetic on them. The "in" sizes of B/W rows are dy's: an
  // older MIOpen that did not clamp the output to 1 wrote negative ones (gfx1030_36.db: -5 for
  // a 7x7 filter over a 1x1 input); they are read back below.
  const ProblemLimits limits;
  const bool backward = c.direction != "F";
  for (int64_t v : {c.in_h, c.in_w, c.in_d}) {
    if (v < (backward ? -limits.max_dim : 0) || v > limits.max_dim) {
      return Bad(text::Cat("column value ", v, " is out of range [0, ", limits.max_dim, "]"));
    }
  }
  for (int64_t v : {c.in_channels, c.fil_h, c.fil_w, c.fil_d,
                    c.out_channels, c.batchsize, c.pad_h, c.pad_w, c.pad_d, c.conv_stride_h,
                    c.conv_stride_w, c.conv_stride_d, c.dilation_h, c.dilation_w, c.dilation_d,
                    c.group_count}) {
    if (v < 0 || v > limits.max_dim) {
      return Bad(text::Cat("column value ", v, " is out of range [0, ", limits.max_dim, "]"));
    }
  }
  const bool is3d = sd == 3;
  Problem p;
  p.spatial_dims = sd;
  p.n = c.batchsize;
  p.groups = c.group_count;
  p.data_type = *type;
  p.fil_layout = *layout;
  p.pad = {is3d ? c.pad_d : 0, c.pad_h, c.pad_w};
  p.stride = {is3d ? c.conv_stride_d : 1, c.conv_stride_h, c.conv_stride_w};
  p.dilation = {is3d ? c.dilation_d : 1, c.dilation_h, c.dilation_w};
  const Dhw fil{is3d ? c.fil_d : 1, c.fil_h, c.fil_w};
  Role in{c.in_channels, {is3d ? c.in_d : 1, c.in_h, c.in_w}, *layout};
  Role out{c.out_channels, {}, *layout};
  const int first = is3d ? 0 : 1;
  if (*dir == Direction::kForward) {
    // The forward output is not stored either; it follows from the input.
    p.direction = Direction::kForward;
    p.c = in.channels;
    p.k = out.channels;
    p.in = in.spatial;
    p.fil = fil;
    p.in_layout = p.out_layout = *layout;
    if (auto st = ValidateProblem(p); !st.ok()) return st;
    return p;
  } else {
    // "in" is dy: recover the forward input x. Every x in [lo, lo + s - 1] gives this output;
    // the largest, o*s + d(f-1) - 2p, is the one real networks use (654 of the 668 strided
    // B/W keys of the gfx942130 find db; the smallest matches 13). An output <= 0 is an older
    // MIOpen's unclamped (in + 2p - d(f-1) - 1) / s + 1: the same formula inverts it, and the
    // row comes back in today's form (output 1).
    out.spatial = {1, 1, 1};
    for (int a = first; a < 3; ++a) {
      const int64_t o = in.spatial[a], s = p.stride[a], d = p.dilation[a], f = fil[a];
      const int64_t x = (o - 1) * s + d * (f - 1) + 1 - 2 * p.pad[a] + (s - 1);
      if (x < 1) {
        return Bad(text::Cat("no forward input gives output ", o, " with filter ", f, ", pad ",
                                p.pad[a], ", stride ", s, ", dilation ", d));
      }
      out.spatial[a] = x;
      if (o <= 0) in.spatial[a] = 1;  // MIOpen's clamp, as today's rows say
    }
  }
  return FromRoles(p, *dir, in, out, fil);
}

std::string PerfDbTextKey(const Problem& p) {
  const PerfDbConfig c = ToPerfDbConfig(p);
  std::string key;
  for (int64_t v : {c.spatial_dim, c.in_channels, c.in_h, c.in_w, c.in_d, c.fil_h, c.fil_w,
                    c.fil_d, c.out_channels, c.batchsize, c.pad_h, c.pad_w, c.pad_d,
                    c.conv_stride_h, c.conv_stride_w, c.conv_stride_d, c.dilation_h,
                    c.dilation_w, c.dilation_d, c.bias, c.group_count}) {
    text::Append(key, v, 'x');
  }
  text::Append(key, c.layout, 'x', c.data_type, 'x', c.direction);
  return key;
}

}  // namespace tuna
