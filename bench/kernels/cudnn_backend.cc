#include "bench/kernels/cudnn_backend.h"

#include "bench/kernels/cudnn_library.h"


#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tuna::bench {
namespace {

// Values of cudnn_graph.h (cuDNN 9). cudnnBackendDescriptorType_t:
constexpr int kDescConvolution = 1, kDescEngine = 2, kDescEngineCfg = 3, kDescEngineHeur = 4,
              kDescExecutionPlan = 5, kDescKnobChoice = 7, kDescOpConvForward = 10, kDescOpConvBwdFilter = 11,
              kDescOpConvBwdData = 12, kDescOperationGraph = 15, kDescVariantPack = 16, kDescTensor = 17;
// cudnnBackendAttributeType_t:
constexpr int kTypeHandle = 0, kTypeDataType = 1, kTypeInt64 = 3, kTypeFloat = 4, kTypeVoidPtr = 6,
              kTypeConvMode = 7, kTypeHeurMode = 8, kTypeKnobType = 9, kTypeNumericalNote = 11,
              kTypeBackendDescriptor = 15;
// cudnnBackendAttributeName_t:
constexpr int kAttrConvCompType = 100, kAttrConvMode = 101, kAttrConvDilations = 102, kAttrConvStrides = 103,
              kAttrConvPostPad = 104, kAttrConvPrePad = 105, kAttrConvSpatialDims = 106;
constexpr int kAttrHeurMode = 200, kAttrHeurGraph = 201, kAttrHeurResults = 202;
constexpr int kAttrCfgEngine = 300, kAttrCfgKnobChoices = 302;
constexpr int kAttrPlanHandle = 400, kAttrPlanConfig = 401, kAttrPlanWorkspace = 402;
constexpr int kAttrKnobChoiceType = 600, kAttrKnobChoiceValue = 601;
constexpr int kAttrFwdAlpha = 700, kAttrFwdBeta = 701, kAttrFwdConv = 702, kAttrFwdW = 703, kAttrFwdX = 704,
              kAttrFwdY = 705;
constexpr int kAttrBwdDataAlpha = 706, kAttrBwdDataBeta = 707, kAttrBwdDataConv = 708, kAttrBwdDataW = 709,
              kAttrBwdDataDx = 710, kAttrBwdDataDy = 711;
constexpr int kAttrBwdFilterAlpha = 712, kAttrBwdFilterBeta = 713, kAttrBwdFilterConv = 714,
              kAttrBwdFilterDw = 715, kAttrBwdFilterX = 716, kAttrBwdFilterDy = 717;
constexpr int kAttrGraphHandle = 800, kAttrGraphOps = 801;
constexpr int kAttrTensorAlignment = 900, kAttrTensorDataType = 901, kAttrTensorDims = 902,
              kAttrTensorStrides = 903, kAttrTensorUid = 906;
constexpr int kAttrPackUids = 1000, kAttrPackPointers = 1001, kAttrPackWorkspace = 1003;
constexpr int kAttrGraphEngineCount = 802;
constexpr int kAttrEngineGraph = 1300, kAttrEngineGlobalIndex = 1301, kAttrEngineNumericalNote = 1303;
// cudnnDataType_t, cudnnConvolutionMode_t, cudnnBackendHeurMode_t, cudnnBackendNumericalNote_t.
constexpr int kDataFloat = 0, kDataHalf = 2, kDataBf16 = 9;
constexpr int kCrossCorrelation = 1;
constexpr int kHeurB = 1, kHeurFallback = 2, kHeurA = 3;
constexpr int kNoteTensorCore = 0, kNoteDownConvert = 1, kNoteReducedPrecision = 2, kNoteFft = 3,
              kNoteNondeterministic = 4, kNoteWinograd = 5, kNoteTypeCount = 10;

constexpr int64_t kUidX = 'x', kUidW = 'w', kUidY = 'y';
constexpr int kMaxKnobs = 64;

}  // namespace

class CudnnBackendLib : public CudnnCommonLib {
 public:
  void (*last_error)(char*, size_t) = nullptr;  // optional (cuDNN >= 9.0)
  Status (*create_desc)(int, void**) = nullptr;
  Status (*destroy_desc)(void*) = nullptr;
  Status (*finalize)(void*) = nullptr;
  Status (*set_attr)(void*, int, int, int64_t, const void*) = nullptr;
  Status (*get_attr)(void*, int, int, int64_t, int64_t*, void*) = nullptr;
  Status (*execute)(void*, void*, void*) = nullptr;

  static absl::StatusOr<const CudnnBackendLib*> Get(const std::string& path) {
    return LoadCudnnOnce<CudnnBackendLib>(path, [](CudnnBackendLib& l, CudnnSymbols& s, void* handle) {
      s.Get(l.create_desc, "cudnnBackendCreateDescriptor");
      s.Get(l.destroy_desc, "cudnnBackendDestroyDescriptor");
      s.Get(l.finalize, "cudnnBackendFinalize");
      s.Get(l.set_attr, "cudnnBackendSetAttribute");
      s.Get(l.get_attr, "cudnnBackendGetAttribute");
      s.Get(l.execute, "cudnnBackendExecute");
      // Optional (cuDNN >= 9.0): a missing one only loses detail in error messages.
      l.last_error = reinterpret_cast<void (*)(char*, size_t)>(dlsym(handle, "cudnnGetLastErrorString"));
    });
  }

  absl::Status Check(Status s, const std::string& what) const {
    if (s == 0) return absl::OkStatus();
    std::string detail;
    if (last_error != nullptr) {
      char buf[512] = {};
      last_error(buf, sizeof(buf));
      detail = buf;
    }
    return absl::InternalError(absl::StrCat(what, ": ", error_string(s), " (", s, ")", detail.empty() ? "" : ": ",
                                            detail.substr(0, 300)));
  }
};

CudnnBackendConv::~CudnnBackendConv() {
  if (lib_ == nullptr) return;
  for (auto it = owned_.rbegin(); it != owned_.rend(); ++it) lib_->destroy_desc(*it);
  if (handle_) lib_->destroy(handle_);
}

std::string CudnnBackendConv::version() const { return lib_ ? absl::StrCat(lib_->get_version()) : ""; }

std::string CudnnBackendConv::library_path() const {
  Dl_info info{};
  if (lib_ == nullptr || dladdr(reinterpret_cast<void*>(lib_->get_version), &info) == 0 || !info.dli_fname) return "";
  return info.dli_fname;
}

absl::StatusOr<std::unique_ptr<CudnnBackendConv>> CudnnBackendConv::Create(const std::string& path,
                                                                         const Problem& p) {
  absl::StatusOr<const CudnnBackendLib*> lib = CudnnBackendLib::Get(path);
  if (!lib.ok()) return lib.status();
  if (p.spatial_dims != 2 && p.spatial_dims != 3) return absl::UnimplementedError("cudnn backend: 2D and 3D only");
  if (p.mode != ConvMode::kConv) return absl::UnimplementedError("cudnn backend: no transposed convolution");
  std::unique_ptr<CudnnBackendConv> c(new CudnnBackendConv());
  c->lib_ = *lib;
  c->p_ = p;
  if (absl::Status st = c->lib_->Check(c->lib_->create(&c->handle_), "cudnnCreate"); !st.ok()) return st;
  if (absl::Status st = c->BuildGraph(); !st.ok()) return st;
  return c;
}

absl::Status CudnnBackendConv::BuildGraph() {
  const CudnnBackendLib& l = *lib_;
  absl::Status st;
  auto make = [&](int type, const std::string& what) -> void* {
    void* d = nullptr;
    if (st.ok()) st = l.Check(l.create_desc(type, &d), absl::StrCat("create ", what));
    if (st.ok()) owned_.push_back(d);
    return d;
  };
  auto set = [&](void* d, int attr, int type, int64_t count, const void* v, const std::string& what) {
    if (st.ok()) st = l.Check(l.set_attr(d, attr, type, count, v), absl::StrCat("set ", what));
  };
  auto finalize = [&](void* d, const std::string& what) {
    if (st.ok()) st = l.Check(l.finalize(d), absl::StrCat("finalize ", what));
  };
  const int dtype = p_.data_type == DataType::kFp32   ? kDataFloat
                    : p_.data_type == DataType::kFp16 ? kDataHalf
                    : p_.data_type == DataType::kBf16 ? kDataBf16
                                                      : -1;
  if (dtype < 0) return absl::UnimplementedError("cudnn backend: fp32, fp16 and bf16 only");
  // Dims N,C,H,W (3D: N,C,D,H,W) with the strides of tuna's own buffers (channels-first or -last).
  const bool three_d = p_.spatial_dims == 3;
  const int64_t rank = three_d ? 5 : 4;
  auto tensor = [&](const TensorDesc& t, int64_t uid, const std::string& what) -> void* {
    void* d = make(kDescTensor, what);
    std::array<int64_t, 5> dims = {t.dims[0], t.dims[1], t.dims[3], t.dims[4], 0};
    std::array<int64_t, 5> strides = {t.strides[0], t.strides[1], t.strides[3], t.strides[4], 0};
    if (three_d) {
      dims = {t.dims[0], t.dims[1], t.dims[2], t.dims[3], t.dims[4]};
      strides = {t.strides[0], t.strides[1], t.strides[2], t.strides[3], t.strides[4]};
    }
    const int64_t alignment = 16;
    set(d, kAttrTensorDataType, kTypeDataType, 1, &dtype, what);
    set(d, kAttrTensorDims, kTypeInt64, rank, dims.data(), what);
    set(d, kAttrTensorStrides, kTypeInt64, rank, strides.data(), what);
    set(d, kAttrTensorUid, kTypeInt64, 1, &uid, what);
    set(d, kAttrTensorAlignment, kTypeInt64, 1, &alignment, what);
    finalize(d, what);
    return d;
  };
  void* x = tensor(p_.XDesc(), kUidX, "tensor x");
  void* w = tensor(p_.WDesc(), kUidW, "tensor w");
  void* y = tensor(p_.YDesc(), kUidY, "tensor y");

  void* conv = make(kDescConvolution, "convolution");
  {
    const int comp = kDataFloat, mode = kCrossCorrelation;
    const int64_t dims = rank - 2;
    const int first = three_d ? 0 : 1;  // Problem's (D, H, W) fields: 2D problems skip the depth
    std::array<int64_t, 3> pad{}, stride{}, dil{};
    for (int i = 0; i < dims; ++i) {
      pad[i] = p_.pad[first + i], stride[i] = p_.stride[first + i], dil[i] = p_.dilation[first + i];
    }
    set(conv, kAttrConvCompType, kTypeDataType, 1, &comp, "conv compute type");
    set(conv, kAttrConvMode, kTypeConvMode, 1, &mode, "conv mode");
    set(conv, kAttrConvSpatialDims, kTypeInt64, 1, &dims, "conv spatial dims");
    set(conv, kAttrConvPrePad, kTypeInt64, dims, pad.data(), "conv pre paddings");
    set(conv, kAttrConvPostPad, kTypeInt64, dims, pad.data(), "conv post paddings");
    set(conv, kAttrConvStrides, kTypeInt64, dims, stride.data(), "conv strides");
    set(conv, kAttrConvDilations, kTypeInt64, dims, dil.data(), "conv dilations");
    finalize(conv, "convolution");
  }

  const float alpha = 1.f, beta = 0.f;
  // The operation of the direction: its descriptor type and the ids of its six attributes.
  struct OpAttrs {
    int desc;
    const char* name;
    int x, w, y, conv, alpha, beta;
  };
  static constexpr OpAttrs kForward{kDescOpConvForward, "fwd", kAttrFwdX, kAttrFwdW, kAttrFwdY,
                                    kAttrFwdConv, kAttrFwdAlpha, kAttrFwdBeta};
  static constexpr OpAttrs kBackwardData{kDescOpConvBwdData, "bwd-data", kAttrBwdDataDx, kAttrBwdDataW,
                                         kAttrBwdDataDy, kAttrBwdDataConv, kAttrBwdDataAlpha, kAttrBwdDataBeta};
  static constexpr OpAttrs kBackwardFilter{kDescOpConvBwdFilter, "bwd-filter", kAttrBwdFilterX, kAttrBwdFilterDw,
                                           kAttrBwdFilterDy, kAttrBwdFilterConv, kAttrBwdFilterAlpha,
                                           kAttrBwdFilterBeta};
  const OpAttrs& a = p_.direction == Direction::kForward        ? kForward
                     : p_.direction == Direction::kBackwardData ? kBackwardData
                                                                : kBackwardFilter;
  const std::string name(a.name);
  void* op = make(a.desc, name + " op");
  set(op, a.x, kTypeBackendDescriptor, 1, &x, name + " x");
  set(op, a.w, kTypeBackendDescriptor, 1, &w, name + " w");
  set(op, a.y, kTypeBackendDescriptor, 1, &y, name + " y");
  set(op, a.conv, kTypeBackendDescriptor, 1, &conv, name + " conv");
  set(op, a.alpha, kTypeFloat, 1, &alpha, name + " alpha");
  set(op, a.beta, kTypeFloat, 1, &beta, name + " beta");
  finalize(op, "convolution op");
  graph_ = make(kDescOperationGraph, "operation graph");
  set(graph_, kAttrGraphOps, kTypeBackendDescriptor, 1, &op, "graph ops");
  set(graph_, kAttrGraphHandle, kTypeHandle, 1, &handle_, "graph handle");
  finalize(graph_, "operation graph");
  return st;
}

absl::Status CudnnBackendConv::BuildPlans(size_t max_workspace_bytes, bool all_engines) {
  const CudnnBackendLib& l = *lib_;
  plans_.clear();
  stats_ = {};
  // Engine config descriptors live until the object dies (plans refer to them).
  auto create = [&](int type, void** d) -> absl::Status {
    absl::Status st = l.Check(l.create_desc(type, d), "create descriptor");
    if (st.ok()) owned_.push_back(*d);
    return st;
  };
  std::map<std::string, size_t> seen;  // engine+knobs -> index in plans_ (or SIZE_MAX when rejected)
  constexpr size_t kRejected = static_cast<size_t>(-1);
  // Scratch descriptors that GetAttribute fills for each config.
  void* engine = nullptr;
  if (absl::Status st = create(kDescEngine, &engine); !st.ok()) return st;
  std::array<void*, kMaxKnobs> knobs{};
  for (void*& k : knobs) {
    if (absl::Status st = create(kDescKnobChoice, &k); !st.ok()) return st;
  }
  // Sources: the three heuristic modes, then (all_engines) every engine with its default knobs.
  std::vector<std::pair<void*, const char*>> sources;
  const std::pair<int, const char*> modes[] = {{kHeurA, "A"}, {kHeurB, "B"}, {kHeurFallback, "FALLBACK"}};
  for (const auto& [mode, mode_name] : modes) {
    void* heur = nullptr;
    if (absl::Status st = create(kDescEngineHeur, &heur); !st.ok()) return st;
    absl::Status st = l.Check(l.set_attr(heur, kAttrHeurGraph, kTypeBackendDescriptor, 1, &graph_), "heur graph");
    if (st.ok()) st = l.Check(l.set_attr(heur, kAttrHeurMode, kTypeHeurMode, 1, &mode), "heur mode");
    if (st.ok()) st = l.Check(l.finalize(heur), "finalize heuristics");
    int64_t count = 0;
    if (st.ok()) {
      st = l.Check(l.get_attr(heur, kAttrHeurResults, kTypeBackendDescriptor, 0, &count, nullptr), "heur count");
    }
    if (!st.ok()) {
      absl::StrAppend(&stats_.mode_errors, stats_.mode_errors.empty() ? "" : "; ", mode_name, ": ", st.message());
      continue;
    }
    std::vector<void*> cfgs(static_cast<size_t>(count), nullptr);
    for (void*& c : cfgs) {
      if (absl::Status cs = create(kDescEngineCfg, &c); !cs.ok()) return cs;
    }
    int64_t got = 0;
    st = l.Check(l.get_attr(heur, kAttrHeurResults, kTypeBackendDescriptor, count, &got, cfgs.data()),
                 "heur results");
    if (!st.ok()) {
      absl::StrAppend(&stats_.mode_errors, stats_.mode_errors.empty() ? "" : "; ", mode_name, ": ", st.message());
      continue;
    }
    cfgs.resize(static_cast<size_t>(std::min(got, count)));
    stats_.heuristic_configs += static_cast<int>(cfgs.size());
    for (void* c : cfgs) sources.push_back({c, mode_name});
  }
  if (all_engines) {
    int64_t global = 0, n = 0;
    if (l.get_attr(graph_, kAttrGraphEngineCount, kTypeInt64, 1, &n, &global) != 0) global = 0;
    for (int64_t i = 0; i < global; ++i) {
      void* e = nullptr;
      void* c = nullptr;
      if (absl::Status st = create(kDescEngine, &e); !st.ok()) return st;
      if (l.set_attr(e, kAttrEngineGraph, kTypeBackendDescriptor, 1, &graph_) != 0 ||
          l.set_attr(e, kAttrEngineGlobalIndex, kTypeInt64, 1, &i) != 0 || l.finalize(e) != 0) {
        continue;  // this engine does not take the graph
      }
      if (absl::Status st = create(kDescEngineCfg, &c); !st.ok()) return st;
      if (l.set_attr(c, kAttrCfgEngine, kTypeBackendDescriptor, 1, &e) != 0 || l.finalize(c) != 0) continue;
      ++stats_.all_engine_configs;
      sources.push_back({c, "ALL"});
    }
  }
  std::set<std::string> skipped_names;
  for (const auto& [cfg, mode_name] : sources) {
    {
      // Engine index and numerical notes.
      int64_t n = 0;
      if (l.get_attr(cfg, kAttrCfgEngine, kTypeBackendDescriptor, 1, &n, &engine) != 0) {
        ++stats_.unsupported;
        continue;
      }
      int64_t engine_index = -1;
      l.get_attr(engine, kAttrEngineGlobalIndex, kTypeInt64, 1, &n, &engine_index);
      std::array<int, kNoteTypeCount> notes{};
      int64_t note_count = 0;
      if (l.get_attr(engine, kAttrEngineNumericalNote, kTypeNumericalNote, kNoteTypeCount, &note_count,
                     notes.data()) != 0) {
        note_count = 0;
      }
      note_count = std::min<int64_t>(note_count, kNoteTypeCount);
      // Knob choices.
      int64_t knob_count = 0;
      if (l.get_attr(cfg, kAttrCfgKnobChoices, kTypeBackendDescriptor, kMaxKnobs, &knob_count, knobs.data()) != 0) {
        knob_count = 0;
      }
      std::vector<std::string> knob_text;
      for (int64_t i = 0; i < std::min<int64_t>(knob_count, kMaxKnobs); ++i) {
        int type = -1;
        int64_t value = 0;
        l.get_attr(knobs[i], kAttrKnobChoiceType, kTypeKnobType, 1, &n, &type);
        l.get_attr(knobs[i], kAttrKnobChoiceValue, kTypeInt64, 1, &n, &value);
        knob_text.push_back(absl::StrCat("k", type, "=", value));
      }
      std::sort(knob_text.begin(), knob_text.end());
      const std::string key = absl::StrCat("eng", engine_index, " ", absl::StrJoin(knob_text, ","));
      if (auto it = seen.find(key); it != seen.end()) {
        if (it->second != kRejected) absl::StrAppend(&plans_[it->second].name, ",", mode_name);
        continue;
      }
      ++stats_.distinct;
      seen[key] = kRejected;
      std::vector<std::string> note_names;
      bool tensor_core = false, down_convert = false;
      for (int64_t i = 0; i < note_count; ++i) {
        switch (notes[i]) {
          case kNoteTensorCore: tensor_core = true; note_names.push_back("TC"); break;
          case kNoteDownConvert: down_convert = true; note_names.push_back("DOWNCVT"); break;
          case kNoteReducedPrecision: note_names.push_back("RPR"); break;
          case kNoteFft: note_names.push_back("FFT"); break;
          case kNoteNondeterministic: note_names.push_back("NONDET"); break;
          case kNoteWinograd: note_names.push_back("WINO"); break;
          default: note_names.push_back(absl::StrCat("n", notes[i])); break;
        }
      }
      if (down_convert || (tensor_core && p_.data_type == DataType::kFp32)) {
        ++stats_.skipped_numerics;
        skipped_names.insert(absl::StrCat("eng", engine_index, "(", absl::StrJoin(note_names, ","), ")"));
        continue;
      }
      void* plan = nullptr;
      if (absl::Status ps = create(kDescExecutionPlan, &plan); !ps.ok()) return ps;
      if (l.set_attr(plan, kAttrPlanHandle, kTypeHandle, 1, &handle_) != 0 ||
          l.set_attr(plan, kAttrPlanConfig, kTypeBackendDescriptor, 1, &cfg) != 0 || l.finalize(plan) != 0) {
        ++stats_.unsupported;
        continue;
      }
      int64_t ws = 0;
      if (l.get_attr(plan, kAttrPlanWorkspace, kTypeInt64, 1, &n, &ws) != 0 || ws < 0) {
        ++stats_.unsupported;
        continue;
      }
      if (static_cast<size_t>(ws) > max_workspace_bytes) {
        ++stats_.skipped_workspace;
        continue;
      }
      seen[key] = plans_.size();
      plans_.push_back(CudnnPlan{
          absl::StrCat(key, note_names.empty() ? "" : " notes=", absl::StrJoin(note_names, ","), " (", mode_name),
          engine_index, static_cast<size_t>(ws), plan});
    }
  }
  for (CudnnPlan& p : plans_) p.name += ")";
  stats_.skipped_engines = absl::StrJoin(skipped_names, " ");
  if (plans_.empty()) {
    return absl::NotFoundError(absl::StrCat("no cuDNN engine config supports the problem (", stats_.heuristic_configs,
                                            " from heuristics, ", stats_.skipped_numerics, " skipped for numerics, ",
                                            stats_.skipped_workspace, " for workspace, ", stats_.unsupported,
                                            " unsupported", stats_.mode_errors.empty() ? "" : "; ",
                                            stats_.mode_errors, ")"));
  }
  return absl::OkStatus();
}

absl::Status CudnnBackendConv::Bind(uint64_t x, uint64_t w, uint64_t y, uint64_t workspace) {
  const CudnnBackendLib& l = *lib_;
  void* pack = nullptr;
  absl::Status st = l.Check(l.create_desc(kDescVariantPack, &pack), "create variant pack");
  if (!st.ok()) return st;
  owned_.push_back(pack);
  const std::array<int64_t, 3> uids = {kUidX, kUidW, kUidY};
  const std::array<void*, 3> ptrs = {reinterpret_cast<void*>(x), reinterpret_cast<void*>(w),
                                     reinterpret_cast<void*>(y)};
  void* ws = reinterpret_cast<void*>(workspace);
  st = l.Check(l.set_attr(pack, kAttrPackUids, kTypeInt64, 3, uids.data()), "variant pack uids");
  if (st.ok()) st = l.Check(l.set_attr(pack, kAttrPackPointers, kTypeVoidPtr, 3, ptrs.data()), "variant pack ptrs");
  if (st.ok()) st = l.Check(l.set_attr(pack, kAttrPackWorkspace, kTypeVoidPtr, 1, &ws), "variant pack workspace");
  if (st.ok()) st = l.Check(l.finalize(pack), "finalize variant pack");
  if (st.ok()) variant_pack_ = pack;
  return st;
}

absl::Status CudnnBackendConv::Execute(size_t i) {
  if (i >= plans_.size()) return absl::OutOfRangeError("no such plan");
  if (variant_pack_ == nullptr) return absl::FailedPreconditionError("Bind first");
  return lib_->Check(lib_->execute(handle_, plans_[i].plan, variant_pack_), "cudnnBackendExecute");
}

}  // namespace tuna::bench
