// tuner_core/model/gbt_model: training, prediction, ranking, persistence and errors on real
// XGBoost (no mocks).
#include "tuner_core/model/gbt_model.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace tuna::model {
namespace {

std::string TmpDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

// y = 3a - 2b + (c > 0.5 ? 4 : 0) over a grid, so a tree ensemble can fit it well.
TrainData Synthetic(size_t n) {
  TrainData d;
  for (size_t i = 0; i < n; ++i) {
    const float a = static_cast<float>(i % 17) / 17, b = static_cast<float>((i * 7) % 13) / 13,
                c = static_cast<float>((i * 5) % 11) / 11;
    REQUIRE(d.features.AddRow({a, b, c}).ok());
    d.labels.push_back(3 * a - 2 * b + (c > 0.5f ? 4.f : 0.f));
  }
  return d;
}

double Rmse(const GbtModel& m, const TrainData& d) {
  absl::StatusOr<std::vector<float>> p = m.Predict(d.features);
  REQUIRE(p.ok());
  double s = 0;
  for (size_t i = 0; i < p->size(); ++i) s += ((*p)[i] - d.labels[i]) * ((*p)[i] - d.labels[i]);
  return std::sqrt(s / p->size());
}

TEST_CASE("regression fits a known function and predicts unseen rows") {
  TrainParams tp;
  tp.rounds = 60;
  tp.max_depth = 4;
  absl::StatusOr<GbtModel> m = GbtModel::Train(Synthetic(400), tp);
  REQUIRE(m.ok());
  CHECK(m->num_features() == 3);
  CHECK(m->rounds() == 60);
  CHECK(Rmse(*m, Synthetic(400)) < 0.25);
  DenseMatrix one;
  REQUIRE(one.AddRow({0.9f, 0.1f, 0.9f}).ok());
  absl::StatusOr<std::vector<float>> y = m->Predict(one);
  REQUIRE(y.ok());
  CHECK(std::fabs((*y)[0] - (3 * 0.9 - 2 * 0.1 + 4)) < 0.6);
}

TEST_CASE("pairwise ranking orders the rows of each group") {
  // Groups of 4 candidates; the relevance grows with feature 0 and does not depend on feature 1.
  TrainData d;
  for (int g = 0; g < 50; ++g) {
    for (int c = 0; c < 4; ++c) {
      const float quality = static_cast<float>((c * 3 + g) % 4);
      REQUIRE(d.features.AddRow({quality + 0.1f * static_cast<float>(g % 3), static_cast<float>(g)}).ok());
      d.labels.push_back(quality);
    }
    d.group_sizes.push_back(4);
  }
  TrainParams tp;
  tp.objective = Objective::kPairwiseRank;
  tp.rounds = 30;
  absl::StatusOr<GbtModel> m = GbtModel::Train(d, tp);
  REQUIRE(m.ok());
  DenseMatrix group;
  for (float q : {2.f, 0.f, 3.f, 1.f}) REQUIRE(group.AddRow({q, 77.f}).ok());
  absl::StatusOr<std::vector<float>> s = m->Predict(group);
  REQUIRE(s.ok());
  CHECK((*s)[2] > (*s)[0]);
  CHECK((*s)[0] > (*s)[3]);
  CHECK((*s)[3] > (*s)[1]);
}

TEST_CASE("a model saved to a buffer or a file predicts exactly as before") {
  TrainParams tp;
  tp.rounds = 20;
  absl::StatusOr<GbtModel> m = GbtModel::Train(Synthetic(200), tp);
  REQUIRE(m.ok());
  const TrainData probe = Synthetic(50);
  absl::StatusOr<std::vector<float>> before = m->Predict(probe.features);
  REQUIRE(before.ok());

  absl::StatusOr<std::string> bytes = m->SaveToBuffer();
  REQUIRE(bytes.ok());
  absl::StatusOr<GbtModel> from_buffer = GbtModel::LoadFromBuffer(*bytes);
  REQUIRE(from_buffer.ok());
  CHECK(from_buffer->num_features() == 3);
  CHECK(from_buffer->rounds() == 20);
  CHECK(*from_buffer->Predict(probe.features) == *before);

  const std::string path = (std::filesystem::path(TmpDir()) / "m.ubj").string();
  REQUIRE(m->SaveToFile(path).ok());
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
  absl::StatusOr<GbtModel> from_file = GbtModel::LoadFromFile(path);
  REQUIRE(from_file.ok());
  CHECK(*from_file->Predict(probe.features) == *before);
}

TEST_CASE("training is deterministic for equal data, params and seed") {
  TrainParams tp;
  tp.rounds = 15;
  tp.subsample = 0.7;
  tp.seed = 5;
  absl::StatusOr<GbtModel> a = GbtModel::Train(Synthetic(300), tp);
  absl::StatusOr<GbtModel> b = GbtModel::Train(Synthetic(300), tp);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a->Predict(Synthetic(40).features) == *b->Predict(Synthetic(40).features));
}

TEST_CASE("Predict is safe from several threads at once") {
  absl::StatusOr<GbtModel> m = GbtModel::Train(Synthetic(300), TrainParams{});
  REQUIRE(m.ok());
  const TrainData probe = Synthetic(64);
  const std::vector<float> expected = *m->Predict(probe.features);
  std::vector<int> mismatches(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        absl::StatusOr<std::vector<float>> got = m->Predict(probe.features);
        if (!got.ok() || *got != expected) ++mismatches[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int n : mismatches) CHECK(n == 0);
}

TEST_CASE("bad input is rejected with a clear error") {
  TrainData d = Synthetic(20);
  d.labels.pop_back();
  absl::StatusOr<GbtModel> m = GbtModel::Train(d, TrainParams{});
  CHECK(absl::IsInvalidArgument(m.status()));
  CHECK(m.status().message().find("19 labels for 20 rows") != std::string_view::npos);

  d = Synthetic(20);
  d.labels[3] = std::nanf("");
  CHECK(GbtModel::Train(d, TrainParams{}).status().message().find("row 3") != std::string_view::npos);

  d = Synthetic(20);
  TrainParams rank;
  rank.objective = Objective::kPairwiseRank;
  d.group_sizes = {10, 9};
  CHECK(GbtModel::Train(d, rank).status().message().find("sum to 19") != std::string_view::npos);

  DenseMatrix row;
  CHECK(row.AddRow({1, 2}).ok());
  CHECK(absl::IsInvalidArgument(row.AddRow({1, 2, 3})));

  absl::StatusOr<GbtModel> good = GbtModel::Train(Synthetic(50), TrainParams{});
  REQUIRE(good.ok());
  CHECK(absl::IsInvalidArgument(good->Predict(row).status()));

  CHECK(absl::IsDataLoss(GbtModel::LoadFromBuffer("not a model").status()));
  absl::StatusOr<std::string> bytes = good->SaveToBuffer();
  REQUIRE(bytes.ok());
  CHECK(bytes->rfind("TGBT", 0) == 0);
  CHECK(absl::IsDataLoss(GbtModel::LoadFromBuffer(bytes->substr(0, bytes->size() - 3)).status()));
  CHECK(absl::IsDataLoss(GbtModel::LoadFromBuffer(*bytes + "x").status()));
  std::string bad_child = *bytes;
  bad_child[4 + 4 + 4 + 4 + 4 + 4] = 0x7f;  // tree 0's first left child: far outside the tree
  CHECK(absl::IsDataLoss(GbtModel::LoadFromBuffer(bad_child).status()));
  CHECK(absl::IsDataLoss(GbtModel::LoadFromBuffer("").status()));
  CHECK(absl::IsNotFound(GbtModel::LoadFromFile("/nonexistent/m.ubj").status()));
}

TEST_CASE("the library version is XGBoost's") { CHECK(LibraryVersion().rfind("1.", 0) == 0); }

}  // namespace
}  // namespace tuna::model
