#include "tuner_core/solver/solver.h"

#include "absl/strings/str_cat.h"

namespace tuna::solver {

absl::Status Solver::IsValid(const Target& target, const Problem& problem,
                             const PerfConfig& config) const {
  const SearchSpace space = Space(target, problem);
  if (!space.Contains(config)) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(Name()), ": params '", config.ToString(),
                                                   "' are not in the search space"));
  }
  return absl::OkStatus();
}

absl::Status Solver::IsValidWhereApplicable(const Target& target, const Problem& problem,
                                            const PerfConfig& config) const {
  if (absl::Status st = Solver::IsValid(target, problem, config); !st.ok()) return st;
  if (absl::Status st = IsApplicable(target, problem); !st.ok()) return absl::InvalidArgumentError(st.message());
  return absl::OkStatus();
}

std::string_view FindDbAlgorithmName(Algorithm algo, Direction direction) {
  // MIOpen src/conv_algo_name.cpp. Backward weights has no FFT algorithm.
  switch (direction) {
    case Direction::kForward:
      switch (algo) {
        case Algorithm::kGemm: return "miopenConvolutionFwdAlgoGEMM";
        case Algorithm::kDirect: return "miopenConvolutionFwdAlgoDirect";
        case Algorithm::kFft: return "miopenConvolutionFwdAlgoFFT";
        case Algorithm::kWinograd: return "miopenConvolutionFwdAlgoWinograd";
        case Algorithm::kImplicitGemm: return "miopenConvolutionFwdAlgoImplicitGEMM";
      }
      break;
    case Direction::kBackwardData:
      switch (algo) {
        case Algorithm::kGemm: return "miopenConvolutionBwdDataAlgoGEMM";
        case Algorithm::kDirect: return "miopenConvolutionBwdDataAlgoDirect";
        case Algorithm::kFft: return "miopenConvolutionBwdDataAlgoFFT";
        case Algorithm::kWinograd: return "miopenConvolutionBwdDataAlgoWinograd";
        case Algorithm::kImplicitGemm: return "miopenConvolutionBwdDataAlgoImplicitGEMM";
      }
      break;
    case Direction::kBackwardWeights:
      switch (algo) {
        case Algorithm::kGemm: return "miopenConvolutionBwdWeightsAlgoGEMM";
        case Algorithm::kDirect: return "miopenConvolutionBwdWeightsAlgoDirect";
        case Algorithm::kFft: return "miopenConvolutionBwdWeightsAlgoDirect";
        case Algorithm::kWinograd: return "miopenConvolutionBwdWeightsAlgoWinograd";
        case Algorithm::kImplicitGemm: return "miopenConvolutionBwdWeightsAlgoImplicitGEMM";
      }
      break;
  }
  return "miopenConvolutionFwdAlgoDirect";
}

absl::Status NotApplicable(std::string_view solver, std::string_view reason) {
  return absl::FailedPreconditionError(absl::StrCat(std::string(solver), ": ", std::string(reason)));
}

absl::Status InvalidConfig(std::string_view solver, const PerfConfig& config, std::string_view reason) {
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(solver), ": params '", config.ToString(), "': ", std::string(reason)));
}

}  // namespace tuna::solver
