#include "tuner_core/problem/transpose.h"

#include <algorithm>
#include <utility>

#include "tuner_core/problem/text_util.h"
#include "tuner_core/problem/validate.h"

namespace tuna {
namespace {

Direction SwappedDirection(Direction d) {
  switch (d) {
    case Direction::kForward: return Direction::kBackwardData;
    case Direction::kBackwardData: return Direction::kForward;
    case Direction::kBackwardWeights: return Direction::kBackwardWeights;
  }
  return d;
}

}  // namespace

absl::StatusOr<Problem> AsConvolution(const Problem& p) {
  if (p.mode == ConvMode::kConv) return p;
  if (absl::Status st = ValidateProblem(p); !st.ok()) return st;
  Problem q = p;
  q.mode = ConvMode::kConv;
  q.pad_mode = PadMode::kDefault;  // a transposed problem's size never follows a pad mode
  q.trans_output_pad = {0, 0, 0};
  q.direction = SwappedDirection(p.direction);
  q.c = p.k;
  q.k = p.c;
  q.in = p.Out();
  q.in_layout = p.out_layout;
  q.out_layout = p.in_layout;
  if (q.Out() != p.in) {
    const char* axis[] = {"d", "h", "w"};
    for (int i = 0; i < 3; ++i) {
      if (q.Out()[i] == p.in[i]) continue;
      return absl::InvalidArgumentError(text::Cat(
          "transposed convolution with trans_output_pad_", axis[i], " ", p.trans_output_pad[i],
          " not below conv_stride_", axis[i], " ", p.stride[i],
          " has no convolution form (MIOpen runs it as one; its output would have ", q.Out()[i],
          " rows, not in_", axis[i], " ", p.in[i], ")"));
    }
  }
  if (absl::Status st = ValidateProblem(q); !st.ok()) return st;
  return q;
}

absl::StatusOr<std::vector<Problem>> AsConvolutions(std::vector<Problem> problems, int* transposed) {
  int n = 0;
  for (Problem& p : problems) {
    if (p.mode == ConvMode::kConv) continue;
    absl::StatusOr<Problem> q = AsConvolution(p);
    if (!q.ok()) return q.status();
    p = *std::move(q);
    ++n;
  }
  if (transposed != nullptr) *transposed = n;
  return problems;
}

int ConvertTransposed(DriverFile& file) {
  int converted = 0;
  std::vector<DriverFileLine> kept;
  kept.reserve(file.lines.size());
  for (DriverFileLine& line : file.lines) {
    int here = 0;
    absl::StatusOr<std::vector<Problem>> conv = AsConvolutions(std::move(line.problems), &here);
    if (!conv.ok()) {
      file.errors.push_back({line.line_number, line.text, std::string(conv.status().message())});
      continue;
    }
    line.problems = *std::move(conv);
    converted += here;
    kept.push_back(std::move(line));
  }
  file.lines = std::move(kept);
  std::stable_sort(file.errors.begin(), file.errors.end(), [](const DriverFileError& a, const DriverFileError& b) {
    return a.line_number < b.line_number;
  });
  return converted;
}

}  // namespace tuna
