// fastloop predict and eval's per-class report, through the CLI: a model trained on a small image folder
// labels its val images with the names of its classes, as its evaluation classifies them.
#include "cat_dog_folder.h"
#include "test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace fastloop;

namespace {

// DIR/{train,val}/{cat,dog} (DIR: a test's fresh folder): the golden JPEGs are cats, the PNGs dogs; a run
// of a few steps on them.
struct TrainedFolder {
  std::string dir, checkpoint;
};

TrainedFolder trained_folder(const std::string& dir) {
  TrainedFolder t{test::cat_dog_folder_write(dir), ""};
  const auto run = test::cli_run("train --data imagefolder:" + t.dir + " --image-size 32 --batch-size 5 --epochs 3 "
                                 "--threads 2 --workers 1 --checkpoint-dir " + t.dir + "/ckpt");
  EXPECT_EQ(run.code, 0) << run.output;
  t.checkpoint = t.dir + "/ckpt/last.ckpt";
  return t;
}

std::vector<std::vector<std::string>> csv_rows(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream s(line);
    for (std::string cell; std::getline(s, cell, ',');) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

double eval_accuracy(const std::string& checkpoint, const std::string& json) {
  const auto run = test::cli_run("eval --checkpoint " + checkpoint + " --out " + json);
  EXPECT_EQ(run.code, 0) << run.output;
  return nlohmann::json::parse(std::ifstream(json)).at("accuracy").get<double>();
}

}  // namespace

TEST(Predict, LabelsFilesByNameInTimmsColumnsAsEvaluationClassifiesThem) {
  const test::TempDir tmp;
  const TrainedFolder t = trained_folder(tmp.sub("predict_files"));
  const std::string out = t.dir + "/preds.csv";
  const auto run = test::cli_run("predict --checkpoint " + t.checkpoint + " --topk 2 --out " + out + " " + t.dir + "/val");
  ASSERT_EQ(run.code, 0) << run.output;
  const auto rows = csv_rows(out);
  ASSERT_EQ(rows.size(), 11u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"path", "index_1", "index_2", "label_1", "label_2", "prob_1", "prob_2"}));
  int64_t right = 0;
  for (size_t r = 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    ASSERT_EQ(row.size(), 7u);
    EXPECT_TRUE(fs::exists(row[0])) << row[0];
    EXPECT_EQ(row[3], row[1] == "0" ? "cat" : "dog");  // names follow indices (classes sorted: cat, dog)
    EXPECT_NE(row[1], row[2]);
    const double p1 = std::stod(row[5]), p2 = std::stod(row[6]);
    EXPECT_GE(p1, p2);
    EXPECT_NEAR(p1 + p2, 1.0, 1e-5);  // two classes: top-2 is the whole softmax
    right += row[0].find("/" + row[3] + "/") != std::string::npos;
  }
  EXPECT_NEAR(static_cast<double>(right) / 10.0, eval_accuracy(t.checkpoint, t.dir + "/eval.json"), 1e-9);
}

TEST(Predict, ADataSourceIsPredictedOnItsTestSplitAndJsonLinesCarryLists) {
  const test::TempDir tmp;
  const TrainedFolder t = trained_folder(tmp.sub("predict_source"));
  const std::string out = t.dir + "/preds.jsonl";
  const auto run = test::cli_run("predict --checkpoint " + t.checkpoint + " --topk 5 --out " + out +
                                 " imagefolder:" + t.dir);
  ASSERT_EQ(run.code, 0) << run.output;
  std::ifstream in(out);
  int64_t rows = 0;
  for (std::string line; std::getline(in, line); ++rows) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_NE(j.at("path").get<std::string>().find("/val/"), std::string::npos);
    EXPECT_EQ(j.at("index").size(), 2u);  // top-5 of 2 classes is 2
    EXPECT_EQ(j.at("label").size(), 2u);
  }
  EXPECT_EQ(rows, 10);
}

TEST(Predict, AnUndecodableImageStopsNamingItOrIsSkippedWhileTheOthersGetTheirRows) {
  const test::TempDir tmp;
  const TrainedFolder t = trained_folder(tmp.sub("predict_bad"));
  const std::string bad = t.dir + "/val/cat/broken.jpg";
  std::ofstream(bad) << "\xff\xd8\xff not a jpeg";
  const auto stopped = test::cli_run("predict --checkpoint " + t.checkpoint + " " + t.dir + "/val");
  EXPECT_EQ(stopped.code, 2) << stopped.output;
  EXPECT_NE(stopped.output.find("broken.jpg"), std::string::npos) << stopped.output;
  const std::string out = t.dir + "/skip.csv";
  const auto skipped = test::cli_run("predict --checkpoint " + t.checkpoint + " --bad-image-policy skip --out " + out +
                                     " " + t.dir + "/val");
  ASSERT_EQ(skipped.code, 0) << skipped.output;
  EXPECT_NE(skipped.output.find("skipped " + bad), std::string::npos) << skipped.output;
  EXPECT_EQ(csv_rows(out).size(), 11u);  // header + the 10 good images
}

TEST(Predict, BadRequestsAreInputErrors) {
  const test::TempDir tmp;
  const std::string dir = tmp.path();
  auto run = test::cli_run("predict " + dir);
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.output.find("predict needs --checkpoint"), std::string::npos) << run.output;
  run = test::cli_run("predict --checkpoint " + dir + "/missing.ckpt " + dir);
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.output.find("missing.ckpt"), std::string::npos) << run.output;
}

TEST(Eval, PerClassAccuracyByNameAndTheConfusionMatrixAddUpToTheAccuracy) {
  const test::TempDir tmp;
  const TrainedFolder t = trained_folder(tmp.sub("eval_classes"));
  const std::string json = t.dir + "/eval.json";
  const double accuracy = eval_accuracy(t.checkpoint, json);
  const auto j = nlohmann::json::parse(std::ifstream(json));
  EXPECT_EQ(j.at("classes"), (nlohmann::json{"cat", "dog"}));
  const auto m = j.at("confusion").get<std::vector<std::vector<int64_t>>>();
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0][0] + m[0][1], 5);  // five cats in val/
  EXPECT_EQ(m[1][0] + m[1][1], 5);
  EXPECT_DOUBLE_EQ((m[0][0] + m[1][1]) / 10.0, accuracy);
  EXPECT_DOUBLE_EQ(j.at("per_class_accuracy").at("cat").get<double>(), m[0][0] / 5.0);
  EXPECT_DOUBLE_EQ(j.at("per_class_accuracy").at("dog").get<double>(), m[1][1] / 5.0);
  const auto printed = test::cli_run("eval --checkpoint " + t.checkpoint);
  EXPECT_NE(printed.output.find("cat"), std::string::npos) << printed.output;
}
