// `--data csv:TRAIN.csv[::VAL.csv]` and files_load (fastloop.Files): the listing (columns, quoting, relative
// paths, labels as names or indices, val read against train's classes), batches decoded from the golden
// JPEGs and PNGs as an image folder's are, and every bad row an InputError naming the file and line.
#include "fastloop/core/errors.h"
#include "fastloop/data/loader/loader.h"
#include "fastloop/data/sources/csv_files.h"
#include "fastloop/data/sources/source.h"
#include "data_files.h"
#include "golden_support.h"
#include "test_support.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace fastloop {
namespace {

using test_data::input_error_of;


// DIR/images/{cat,dog}/ with golden JPEGs (cats) and PNGs (dogs); returns DIR.
std::string images_make(const std::string& dir) {
  for (const char* f : {"rgb.jpg", "gray.jpg", "cmyk.jpg"}) {
    fs::create_directories(fs::path(dir) / "images" / "cat");
    fs::copy_file(test::kImageGoldenDir + f, fs::path(dir) / "images" / "cat" / f);
  }
  for (const char* f : {"rgb.png", "rgba.png", "palette.png"}) {
    fs::create_directories(fs::path(dir) / "images" / "dog");
    fs::copy_file(test::kImageGoldenDir + f, fs::path(dir) / "images" / "dog" / f);
  }
  fs::copy_file(test::kImageGoldenDir + "rgb.jpg", fs::path(dir) / "images" / "a, b.jpg");  // a comma: quoted in the CSV
  return dir;
}

std::string write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string load_error(const std::string& spec) {
  return input_error_of([&] { data_load(spec); });
}

TEST(CsvSource, ListsNamedLabelsSortedWithPathsRelativeToTheFile) {
  const test::TempDir tmp;
  const std::string dir = images_make(tmp.sub("csv"));
  // Named columns in any order, an extra column ignored, a quoted path with a comma, CRLF, a blank line.
  const std::string train = write(dir + "/train.csv",
                                  "id,Label,path\r\n1,dog,images/dog/rgb.png\r\n2,cat,images/cat/rgb.jpg\r\n\r\n"
                                  "3,cat,\"images/a, b.jpg\"\r\n4,dog," + dir + "/images/dog/rgba.png\r\n");
  const std::string val = write(dir + "/val.csv", "path,label\nimages/cat/gray.jpg,cat\n");
  const DatasetSplits splits = data_load("csv:" + train + "::" + val);
  EXPECT_EQ(splits.name, "csv");
  EXPECT_EQ(splits.train.classes, (std::vector<std::string>{"cat", "dog"}));  // sorted, as ImageFolder's
  EXPECT_EQ(splits.train.num_classes, 2);
  ASSERT_EQ(splits.train.size(), 4);
  EXPECT_EQ(splits.train.encoded->name(0), dir + "/images/dog/rgb.png");
  EXPECT_EQ(splits.train.encoded->name(2), dir + "/images/a, b.jpg");
  EXPECT_EQ(splits.train.encoded->name(3), dir + "/images/dog/rgba.png");  // absolute stays as it is
  EXPECT_EQ(splits.train.encoded->label(0), 1);
  EXPECT_EQ(splits.train.encoded->label(1), 0);
  EXPECT_EQ(splits.train.encoded->label(2), 0);
  ASSERT_EQ(splits.test.size(), 1);
  EXPECT_EQ(splits.test.encoded->label(0), 0);
  EXPECT_EQ(splits.test.classes, splits.train.classes);
  // Without ::VAL there is no test split, as an image folder without val/.
  EXPECT_EQ(data_load("csv:" + train).test.size(), 0);
}

TEST(CsvSource, IntegerLabelsAreClassIndicesAndTwoColumnsNeedNoNames) {
  const test::TempDir tmp;
  const std::string dir = images_make(tmp.sub("csv_indices"));
  const std::string train = write(dir + "/t.csv", "filename,class\nimages/cat/rgb.jpg,4\nimages/dog/rgb.png,0\n");
  const DatasetSplits splits = data_load("csv:" + train);
  EXPECT_EQ(splits.train.num_classes, 5);  // the largest index + 1
  EXPECT_EQ(splits.train.classes, (std::vector<std::string>{"0", "1", "2", "3", "4"}));
  EXPECT_EQ(splits.train.encoded->label(0), 4);
  const std::string val = write(dir + "/v.csv", "path,label\nimages/cat/gray.jpg,5\n");
  EXPECT_CONTAINS(load_error("csv:" + train + "::" + val), "v.csv line 2: class index 5 is not below the train file's 5 classes");
}

TEST(CsvSource, BatchesDecodeAsTheSameFilesInAnImageFolder) {
  const test::TempDir tmp;
  const std::string dir = images_make(tmp.sub("csv_batches"));
  const std::string train = write(dir + "/train.csv",
                                  "path,label\nimages/cat/rgb.jpg,cat\nimages/cat/gray.jpg,cat\nimages/cat/cmyk.jpg,cat\n"
                                  "images/dog/rgb.png,dog\nimages/dog/rgba.png,dog\nimages/dog/palette.png,dog\n");
  DataOptions options;
  options.image.size = 24;
  const Dataset csv = data_load("csv:" + train, options).train;
  const Dataset folder = data_load("imagefolder:" + [&] {
    fs::create_directories(dir + "/folder/train");
    fs::copy(dir + "/images/cat", dir + "/folder/train/cat", fs::copy_options::recursive);
    fs::copy(dir + "/images/dog", dir + "/folder/train/dog", fs::copy_options::recursive);
    return dir + "/folder";
  }(), options).train;
  ASSERT_EQ(csv.size(), folder.size());
  LoaderOptions eval;
  eval.batch_size = 6;
  eval.workers = 2;
  eval.sampler.shuffle = false;
  Loader a(csv, eval), b(folder, eval);
  a.start_epoch(0), b.start_epoch(0);
  const auto x = a.next(), y = b.next();
  ASSERT_TRUE(x && y);
  EXPECT_EQ(x->images.sizes(), (std::vector<int64_t>{6, 3, 24, 24}));
  // The folder lists cmyk, gray, rgb and palette, rgb, rgba (sorted); compare sample by sample.
  const std::vector<int64_t> folder_of_csv = {2, 1, 0, 4, 5, 3};
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_TRUE(x->images[i].equal(y->images[folder_of_csv[i]])) << i;
    EXPECT_EQ(x->labels[i].item<int64_t>(), y->labels[folder_of_csv[i]].item<int64_t>()) << i;
  }
}

TEST(CsvSource, BadRowsAreInputErrorsNamingTheFileAndLine) {
  const test::TempDir tmp;
  const std::string dir = images_make(tmp.sub("csv_bad"));
  auto error_of = [&](const std::string& text) { return load_error("csv:" + write(dir + "/bad.csv", text)); };
  const std::string file = dir + "/bad.csv";
  EXPECT_CONTAINS(error_of("path,label\nimages/cat/rgb.jpg,cat\nimages/cat/nope.jpg,cat\n"),
                  file + " line 3: " + dir + "/images/cat/nope.jpg: no such file");
  EXPECT_CONTAINS(error_of("path,label\nimages/cat/rgb.jpg,0\nimages/dog/rgb.png,dog\n"),
                  file + " line 3: label 'dog' is a name but line 2's is an index");
  EXPECT_CONTAINS(error_of("path,label\nimages/cat/rgb.jpg,-1\n"), file + " line 2: label -1 is negative");
  EXPECT_CONTAINS(error_of("path,label\nimages/cat/rgb.jpg,\n"), file + " line 2: the label is empty");
  EXPECT_CONTAINS(error_of("path,label\nimages/cat/rgb.jpg,cat,extra\n"), file + " line 2: 3 fields, the header has 2");
  EXPECT_CONTAINS(error_of("path,label\n\"images/cat/rgb.jpg,cat\n"), file + " line 2: a quoted field is not closed");
  EXPECT_CONTAINS(error_of("path,label\nimages/c\"at.jpg,cat\n"), file + " line 2: a quote inside an unquoted field");
  EXPECT_CONTAINS(error_of("file,kind,size\na.jpg,cat,1\n"), file + " line 1: the header row ('file', 'kind', 'size') names no 'path' and 'label'");
  EXPECT_CONTAINS(error_of("path,label\n"), file + ": no rows after the header");
  EXPECT_CONTAINS(error_of(""), file + ": empty; expected a header row");
  write(dir + "/notes.txt", "x");
  EXPECT_CONTAINS(error_of("path,label\nnotes.txt,cat\n"), file + " line 2: " + dir + "/notes.txt is not an image file");
  EXPECT_CONTAINS(load_error("csv:" + dir + "/missing.csv"), "CSV file " + dir + "/missing.csv: cannot open");
  EXPECT_CONTAINS(load_error("csv:" + dir + "/x.csv::"), "expected csv:TRAIN.csv or csv:TRAIN.csv::VAL.csv");
  // A val file: the train file's kind of label and its classes only.
  const std::string train = write(dir + "/train.csv", "path,label\nimages/cat/rgb.jpg,cat\n");
  const std::string val = write(dir + "/val.csv", "path,label\nimages/dog/rgb.png,dog\n");
  EXPECT_CONTAINS(load_error("csv:" + train + "::" + val),
                  dir + "/val.csv line 2: class 'dog' is not one of the train file's 1 classes");
  write(val, "path,label\nimages/dog/rgb.png,0\n");
  EXPECT_CONTAINS(load_error("csv:" + train + "::" + val), "labels are class indices but the train file's are class names");
}

TEST(CsvSource, UndecodableFilesFollowTheBadImagePolicy) {
  const test::TempDir tmp;
  const std::string dir = images_make(tmp.sub("csv_undecodable"));
  fs::copy_file(test::kImageGoldenDir + "truncated.jpg", dir + "/images/truncated.jpg");
  const std::string train = write(dir + "/t.csv", "path,label\nimages/cat/rgb.jpg,0\nimages/truncated.jpg,1\n");
  DataOptions options;
  options.image.size = 16;
  Dataset data = data_load("csv:" + train, options).train;
  LoaderOptions o;
  o.batch_size = 2;
  o.sampler.shuffle = false;
  {
    Loader loader(data, o);
    loader.start_epoch(0);
    EXPECT_CONTAINS(input_error_of([&] { loader.next(); }), "truncated.jpg");
  }
  data.skip_bad_images = true;
  Loader skipping(data, o);
  skipping.start_epoch(0);
  ASSERT_TRUE(skipping.next().has_value());
  EXPECT_EQ(skipping.bad_images_skipped(), 1);
}

// The CLI spells the source as --data: `fastloop train` trains on TRAIN and evaluates on VAL; a bad row stops
// it before any step with exit code 2 and the row's file and line.
TEST(CsvSourceCli, TrainsAndEvaluatesFromCsvFilesAndReportsABadRow) {
  const test::TempDir tmp;
  const std::string dir = images_make(tmp.sub("csv_cli"));
  const std::string train = write(dir + "/train.csv", "path,label\nimages/cat/rgb.jpg,cat\nimages/cat/gray.jpg,cat\n"
                                                      "images/dog/rgb.png,dog\nimages/dog/rgba.png,dog\n");
  const std::string val = write(dir + "/val.csv", "path,label\nimages/cat/cmyk.jpg,cat\nimages/dog/palette.png,dog\n");
  const auto r = test::cli_run("train --data 'csv:" + train + "::" + val + "' --batch-size 2 --image-size 32 --epochs 1 "
                               "--device cpu --threads 1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_CONTAINS(r.output, "(loss ");
  EXPECT_CONTAINS(r.output, ", 2 images)");  // evaluated on val.csv's two
  write(val, "path,label\nimages/cat/cmyk.jpg,cat\nimages/dog/gone.png,dog\n");
  const auto bad = test::cli_run("train --data 'csv:" + train + "::" + val + "' --image-size 32 --device cpu");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_CONTAINS(bad.output, "error: " + val + " line 3: " + dir + "/images/dog/gone.png: no such file");
}

TEST(FilesSource, PathsAndLabelsAsBothSplitsWithTheirClassNames) {
  const test::TempDir tmp;
  const std::string dir = images_make(tmp.sub("files"));
  const DatasetSplits splits = files_load({dir + "/images/cat/rgb.jpg", dir + "/images/dog/rgb.png"}, {0, 1}, {"cat", "dog"});
  EXPECT_EQ(splits.train.size(), 2);
  EXPECT_EQ(splits.test.size(), 2);
  EXPECT_EQ(splits.train.classes, (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(splits.train.encoded->label(1), 1);
  EXPECT_EQ(files_load({dir + "/images/cat/rgb.jpg"}, {3}, {}).train.num_classes, 4);
  EXPECT_CONTAINS(input_error_of([&] { files_load({dir + "/images/cat/rgb.jpg", dir + "/gone.png"}, {0, 1}, {}); }),
                  "fastloop.Files: paths[1]: " + dir + "/gone.png: no such file");
  EXPECT_CONTAINS(input_error_of([&] { files_load({dir + "/images/cat/rgb.jpg"}, {2}, {"cat", "dog"}); }),
                  "fastloop.Files: paths[0]: label 2 is not a class index in [0, 2)");
}

}  // namespace
}  // namespace fastloop
