// The bench printers (bench/report.h) on a hand-built result: markdown in seed 001's shape, CSV with one
// line per cell, JSON that parses and keeps every field, and an HTML page that headless Chromium renders
// with its SVG bars laid out at positive size inside their charts. The PyTorch peer: test_python_peer.cpp.
#include "fastloop/bench/cell_fields.h"
#include "fastloop/bench/report.h"
#include "fastloop/core/errors.h"
#include "temp_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <unistd.h>

namespace {

using fastloop::BenchCell;
using fastloop::BenchResult;

BenchCell cell(const std::string& model, const std::string& row, double train, double eval, double speedup) {
  BenchCell c;
  c.model = model;
  c.row = row;
  c.train_img_per_s = train;
  c.train_img_per_s_min = train * 0.95;
  c.train_img_per_s_max = train * 1.02;
  c.eval_img_per_s = eval;
  c.eval_img_per_s_min = c.eval_img_per_s_max = eval;
  c.train_img_per_s_reps = {train * 1.02, train, train * 0.95};  // the median and spread above come from these
  c.eval_img_per_s_reps = {eval, eval, eval};
  c.train_s = 50000.0 / train;
  c.test_s = 10000.0 / eval;
  c.train_speedup = speedup;
  c.eval_speedup = 1.0;
  c.split = {0.002, 0.0, 0.030, 0.060, 0.008, 0.0};
  c.peak_memory_bytes = 812.0 * 1024 * 1024;
  c.peak_memory_kind = "process_peak_rss";
  c.eval_peak_memory_bytes = 300.0 * 1024 * 1024;
  c.forward_flops = model == "resnet18" ? 1.11e9 : 0.176e9;
  c.mfu = 0.123;
  return c;
}

BenchResult hand_built_result() {
  BenchResult r;
  r.options.models = {"resnet18", "mobilenet_v2"};
  r.options.rows = {"baseline", "amp", "channels-last"};
  r.options.repeat = 3;
  r.options.compare_python = true;
  auto& e = r.environment;
  e.cpu_model = "AMD EPYC 9R14";
  e.cores = 2;
  e.threads = 2;
  e.device = "cpu";
  e.libtorch_version = "2.14.1";
  e.blas = "MKL 2024";
  e.commit = "abc1234";
  e.peak_gemm_gflops = 180.5;
  e.pytorch_version = "2.14.1+cpu";
  e.command = "fastloop bench --models resnet18,mobilenet_v2 --rows baseline,amp,channels-last --compare-python";
  e.date = "2025-01-01T00:00:00Z";
  r.config_json = R"({"data": {"batch_size": 128, "source": "synthetic"}, "perf": {"amp": "off"}})";
  r.row_descriptions = {"baseline: 0 workers, no pinning, NCHW", "amp: autocast (bf16 on CPU), with a GradScaler for fp16",
                        "channels-last: NHWC parameters and batches"};
  r.cells.push_back(cell("resnet18", "baseline", 2450.0, 7140.0, 1.0));
  r.cells.push_back(cell("mobilenet_v2", "baseline", 1000.0, 4000.0, 1.0));
  BenchCell na;
  na.model = "resnet18";
  na.row = "amp";
  na.status = "n/a: fp16 autocast needs CUDA, this is cpu";
  na.python.status = "n/a: fp16 autocast needs CUDA, this is cpu";
  r.cells.push_back(na);
  na.model = "mobilenet_v2";
  r.cells.push_back(na);
  r.cells.push_back(cell("resnet18", "channels-last", 3060.0, 7140.0, 1.25));
  r.cells.push_back(cell("mobilenet_v2", "channels-last", 900.0, 4000.0, 0.9));
  for (auto& c : r.cells) {
    if (c.status != "ok") continue;
    c.python.status = "ok";
    c.python.train_img_per_s = c.train_img_per_s / 1.4;
    c.python.eval_img_per_s = c.eval_img_per_s / 1.1;
    c.python.train = {1.4, 1.35, 1.5, false};  // interleaved pairs: median, min, max
    c.python.eval = {1.1, 0.95, 1.2, true};     // the pairs spread wider than 1.1 is from 1
  }
  r.cells.back().python.status = "n/a: a reason, with a comma";
  r.cells.back().python.train_img_per_s = r.cells.back().python.eval_img_per_s = 0.0;
  r.cells.back().python.train = r.cells.back().python.eval = {};
  // An evaluation-only row: no training numbers, and no mobilenet_v2 cell at all (shown as "-").
  BenchCell eval_only = cell("resnet18", "no-grad", 1.0, 5712.0, 0.0);
  eval_only.eval_only = true;
  eval_only.train_img_per_s = eval_only.train_img_per_s_min = eval_only.train_img_per_s_max = eval_only.train_s = 0.0;
  eval_only.eval_speedup = 0.8;
  eval_only.split = {};
  eval_only.mfu = 0.0;
  eval_only.peak_memory_bytes = eval_only.eval_peak_memory_bytes;
  eval_only.python.status = "ok";
  eval_only.python.eval_img_per_s = 5712.0 / 1.2;
  eval_only.python.eval = {1.2, 1.15, 1.25, false};
  r.cells.push_back(eval_only);
  r.train_images = 50000;
  r.test_images = 10000;
  r.seconds = 612.0;
  e.peak_gemm_method = "float32 1024x1024x1024 matmul, median of 5, 2 threads";
  e.load_average = "start 0.50 0.40 0.30, end 1.90 1.20 0.70";
  return r;
}

std::string run_capture(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::string out;
  if (!pipe) return out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof(buf), pipe.get())) out.append(buf, n);
  return out;
}

std::string chromium_path() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    std::string path = run_capture(std::string("command -v ") + name + " 2>/dev/null");
    while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
    if (!path.empty()) return path;
  }
  return "";
}

}  // namespace

TEST(BenchReport, MarkdownHasEnvironmentSeedTableSpeedupsAndNaCells) {
  const std::string md = fastloop::bench_markdown(hand_built_result());
  EXPECT_EQ(md.rfind("# fastloop bench\n", 0), 0u);
  for (const char* want : {"| CPU | AMD EPYC 9R14, 2 usable cores |", "| LibTorch | 2.14.1 |", "| BLAS | MKL 2024 |",
                           "| fastloop commit | abc1234 |", "180.5 GFLOP/s", "| GPU | none |", "`fastloop bench --models"})
    EXPECT_NE(md.find(want), std::string::npos) << want;
  EXPECT_LT(md.find("AMD EPYC"), md.find("## Train and test time"));  // the environment comes first
  EXPECT_NE(md.find("| row | resnet18 | mobilenet_v2 |"), std::string::npos);
  EXPECT_NE(md.find("| baseline | train: 20.4s test: 1.4s | train: 50.0s test: 2.5s |"), std::string::npos) << md;
  EXPECT_NE(md.find("| amp | n/a: fp16 autocast needs CUDA, this is cpu | n/a: fp16 autocast needs CUDA, this is cpu |"),
            std::string::npos);
  EXPECT_NE(md.find("train 3,060 (2,907–3,121) 1.25×"), std::string::npos) << md;
  EXPECT_NE(md.find("| resnet18 | channels-last | 2.0 | 0.0 | 30.0 | 60.0 | 8.0 | 0.0 | 100.0 |"), std::string::npos);
  EXPECT_NE(md.find("812 MiB (eval 300 MiB) · MFU 12.3% · 1.11 GFLOP/img"), std::string::npos) << md;
  EXPECT_NE(md.find("| no-grad | test: 1.8s | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("| no-grad | eval 5,712 0.80× | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("| no-grad | eval 300 MiB · 1.11 GFLOP/img | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("| no-grad | eval 1.20× (1.15–1.25) [4,760] | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("for 50,000 and 10,000 images"), std::string::npos);
  EXPECT_NE(md.find("| load average | start 0.50 0.40 0.30, end 1.90 1.20 0.70 |"), std::string::npos);
  EXPECT_NE(md.find("## fastloop ÷ PyTorch"), std::string::npos);
  EXPECT_NE(md.find("train 1.40× (1.35–1.50) [1,750] · eval ~1.10× (0.95–1.20) [6,491]"), std::string::npos) << md;
  EXPECT_NE(md.find("n/a: a reason, with a comma"), std::string::npos);
  EXPECT_NE(md.find("- `amp`: autocast (bf16 on CPU), with a GradScaler for fp16"), std::string::npos);
}

TEST(BenchReport, MarkdownLeavesOutThePyTorchTableWhenThePeerDidNotRun) {
  auto r = hand_built_result();
  for (auto& c : r.cells) c.python.status.clear();
  r.environment.pytorch_version.clear();
  EXPECT_EQ(fastloop::bench_markdown(r).find("PyTorch"), std::string::npos);
  EXPECT_EQ(fastloop::bench_html(r).find("vs-pytorch"), std::string::npos);
}

TEST(BenchReport, CsvHasEnvironmentCommentsAHeaderAndOneLinePerCell) {
  const auto r = hand_built_result();
  std::istringstream csv(fastloop::bench_csv(r));
  std::vector<std::string> comments, lines;
  for (std::string line; std::getline(csv, line);) (line.rfind("# ", 0) == 0 ? comments : lines).push_back(line);
  ASSERT_FALSE(comments.empty());
  EXPECT_EQ(comments[0], "# CPU: AMD EPYC 9R14, 2 usable cores");
  ASSERT_EQ(lines.size(), r.cells.size() + 1);
  EXPECT_EQ(lines[0].rfind("model,row,nproc,status,eval_only,train_img_per_s,", 0), 0u);
  EXPECT_EQ(lines[1].rfind("resnet18,baseline,1,ok,false,2450,", 0), 0u) << lines[1];
  EXPECT_EQ(lines[3].rfind("resnet18,amp,1,\"n/a: fp16 autocast needs CUDA, this is cpu\",false,0,", 0), 0u) << lines[3];
  EXPECT_EQ(lines[7].rfind("resnet18,no-grad,1,ok,true,0,", 0), 0u) << lines[7];
  EXPECT_NE(lines[6].find(",\"n/a: a reason, with a comma\",0,0"), std::string::npos) << lines[6];
  // Every line has as many fields as the header once quoted commas are skipped.
  auto fields = [](const std::string& line) {
    size_t n = 1;
    bool quoted = false;
    for (char ch : line) {
      if (ch == '"') quoted = !quoted;
      if (ch == ',' && !quoted) ++n;
    }
    return n;
  };
  for (const auto& line : lines) EXPECT_EQ(fields(line), fields(lines[0])) << line;
}

TEST(BenchReport, JsonParsesAndKeepsEnvironmentConfigRowsAndEveryCellField) {
  const auto r = hand_built_result();
  const auto json = nlohmann::ordered_json::parse(fastloop::bench_json(r));
  EXPECT_EQ(std::next(json.begin()).key(), "environment");  // right after "bench": "grid"
  EXPECT_EQ(json["environment"]["cpu_model"], "AMD EPYC 9R14");
  EXPECT_EQ(json["environment"]["peak_gemm_gflops"], 180.5);
  EXPECT_EQ(json["environment"]["pytorch_version"], "2.14.1+cpu");
  EXPECT_EQ(json["options"]["models"], nlohmann::ordered_json::array({"resnet18", "mobilenet_v2"}));
  EXPECT_EQ(json["options"]["compare_python"], true);
  ASSERT_TRUE(json["config"].is_object());
  EXPECT_EQ(json["config"]["data"]["batch_size"], 128);
  ASSERT_EQ(json["rows"].size(), 3u);
  EXPECT_EQ(json["rows"][2]["name"], "channels-last");
  EXPECT_EQ(json["rows"][2]["description"], "NHWC parameters and batches");
  ASSERT_EQ(json["cells"].size(), r.cells.size());
  for (size_t i = 0; i < r.cells.size(); ++i) {
    const auto& c = json["cells"][i];
    const auto& want = r.cells[i];
    EXPECT_EQ(c["model"], want.model);
    EXPECT_EQ(c["row"], want.row);
    EXPECT_EQ(c["status"], want.status);
    EXPECT_EQ(c["train_img_per_s"], want.train_img_per_s);
    EXPECT_EQ(c["train_img_per_s_min"], want.train_img_per_s_min);
    EXPECT_EQ(c["eval_speedup"], want.eval_speedup);
    EXPECT_EQ(c["split"]["backward_s"], want.split.backward);
    EXPECT_EQ(c["split"]["step_s"], want.split.total());
    EXPECT_EQ(c["train_img_per_s_reps"], want.train_img_per_s_reps);
    EXPECT_EQ(c["eval_img_per_s_reps"], want.eval_img_per_s_reps);
    EXPECT_EQ(c["peak_memory_kind"], want.peak_memory_kind);
    EXPECT_EQ(c["forward_flops"], want.forward_flops);
    EXPECT_EQ(c["mfu"], want.mfu);
    EXPECT_EQ(c["python_status"], want.python.status);
    EXPECT_EQ(c["python_train_img_per_s"], want.python.train_img_per_s);
  }
  EXPECT_NEAR(json["cells"][0]["train_vs_python"].get<double>(), 1.4, 1e-12);
  EXPECT_NEAR(json["cells"][0]["train_vs_python_min"].get<double>(), 1.35, 1e-12);
  EXPECT_NEAR(json["cells"][0]["train_vs_python_max"].get<double>(), 1.5, 1e-12);
  EXPECT_EQ(json["cells"][0]["train_vs_python_noisy"], false);
  EXPECT_EQ(json["cells"][0]["eval_vs_python_noisy"], true);
  EXPECT_TRUE(json["cells"][2]["train_vs_python"].is_null());  // n/a: no ratio
  EXPECT_EQ(json["cells"][6]["eval_only"], true);
  EXPECT_NEAR(json["cells"][6]["eval_vs_python"].get<double>(), 1.2, 1e-12);
  EXPECT_EQ(json["train_images"], 50000);
  EXPECT_EQ(json["environment"]["load_average"], r.environment.load_average);
}

TEST(BenchReport, CsvAndJsonCarryEveryFieldOfTheOneListUnderOneName) {
  auto r = hand_built_result();
  r.cells[0].nproc = 2;  // a multi-rank cell: its DDP fields go in the JSON too
  r.cells[0].buckets = 3;
  r.cells[0].python.train_img_per_s_reps = {1700.0, 1750.0};
  const auto& fields = fastloop::bench_cell_fields();
  std::istringstream csv(fastloop::bench_csv(r));
  std::string header, line;
  while (std::getline(csv, line))
    if (line.rfind("# ", 0) != 0) {
      header = line;
      break;
    }
  std::string want_header;
  for (const auto& f : fields)
    if (f.in_csv) want_header += (want_header.empty() ? "" : ",") + std::string(f.name);
  EXPECT_EQ(header, want_header);
  std::getline(csv, line);  // resnet18 baseline: its repetitions, ';'-separated, and the PyTorch ratio
  EXPECT_NE(line.find(",2499;2450;2327.5,7140;7140;7140,1700;1750,"), std::string::npos) << line;
  EXPECT_NE(line.find(",1.4,1.1,"), std::string::npos) << line;

  const auto json = nlohmann::ordered_json::parse(fastloop::bench_json(r));
  ASSERT_EQ(json["cell_fields"].size(), fields.size());
  for (size_t i = 0; i < r.cells.size(); ++i) {
    const auto& cell = json["cells"][i];
    for (const auto& f : fields) {
      const bool present = *f.group ? cell.contains(f.group) && cell[f.group].contains(f.name) : cell.contains(f.name);
      EXPECT_EQ(present, !f.multi_rank_only || r.cells[i].nproc > 1) << i << " " << f.name;
    }
  }
  EXPECT_EQ(json["cells"][0]["ddp"]["buckets"], 3);
  EXPECT_EQ(json["cells"][0]["python_train_img_per_s_reps"], nlohmann::ordered_json::array({1700.0, 1750.0}));
  EXPECT_TRUE(json["cells"][2]["train_img_per_s_reps"].empty());  // n/a: nothing measured
  EXPECT_TRUE(json["cells"][2]["train_vs_python"].is_null());
}

TEST(BenchReport, JsonRejectsAConfigThatIsNotJson) {
  auto r = hand_built_result();
  r.config_json = "{not json";
  EXPECT_THROW(fastloop::bench_json(r), std::runtime_error);
  r.config_json.clear();
  EXPECT_TRUE(nlohmann::json::parse(fastloop::bench_json(r))["config"].is_null());
}

TEST(BenchReport, HtmlIsSelfContained) {
  const std::string html = fastloop::bench_html(hand_built_result());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  // The only http:// is the SVG namespace, an identifier that is never fetched.
  for (size_t at = html.find("http://"); at != std::string::npos; at = html.find("http://", at + 1))
    EXPECT_EQ(html.compare(at, 26, "http://www.w3.org/2000/svg"), 0);
  EXPECT_LT(html.find("AMD EPYC 9R14"), html.find("<svg"));
  for (const char* id : {"id=\"speedup-train\"", "id=\"speedup-eval\"", "id=\"vs-pytorch\"", "id=\"vs-pytorch-eval\"",
                         "id=\"time-split\""})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  EXPECT_NE(html.find("n/a: fp16 autocast needs CUDA, this is cpu"), std::string::npos);
}

TEST(BenchReport, HtmlChartsRenderInHeadlessChromium) {
  const std::string chromium = chromium_path();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs Debian's chromium)";
  // The page itself has no script; the test appends one that measures every chart bar as laid out by the
  // browser and writes "chart-id bars drawn" lines into the DOM, which --dump-dom then prints.
  std::string html = fastloop::bench_html(hand_built_result());
  const std::string probe = R"(<pre id="probe"></pre><script>
var out = [];
document.querySelectorAll('svg.chart').forEach(function (svg) {
  var box = svg.getBoundingClientRect(), bars = svg.querySelectorAll('rect.bar'), drawn = 0;
  bars.forEach(function (bar) {
    var b = bar.getBoundingClientRect(), fill = getComputedStyle(bar).fill;
    var inside = b.left >= box.left - 0.5 && b.right <= box.right + 0.5 && b.top >= box.top - 0.5 && b.bottom <= box.bottom + 0.5;
    if (b.width > 0 && b.height > 0 && inside && fill && fill !== 'none') drawn++;
  });
  out.push(svg.id + ' ' + bars.length + ' ' + drawn + ' ' + Math.round(box.width) + ' ' + Math.round(box.height));
});
document.getElementById('probe').textContent = out.join(';');
</script>)";
  html.insert(html.rfind("</body>"), probe);
  const fastloop::test::TempDir tmp;
  const std::filesystem::path dir = tmp.path();
  const auto page = dir / "report.html";
  std::ofstream(page) << html;
  const std::string dom = run_capture("timeout 120 '" + chromium + "' --headless --no-sandbox --disable-gpu "
                                      "--user-data-dir='" + (dir / "profile").string() + "' --dump-dom 'file://" +
                                      page.string() + "' 2>/dev/null");
  const size_t start = dom.find("<pre id=\"probe\">");
  ASSERT_NE(start, std::string::npos) << "chromium printed no DOM: " << dom.substr(0, 500);
  std::istringstream probed(dom.substr(start + 16, dom.find("</pre>", start) - start - 16));
  std::map<std::string, std::vector<long>> charts;  // id → bars, drawn, width, height
  for (std::string line; std::getline(probed, line, ';');) {
    std::istringstream fields(line);
    std::string id;
    long bars = 0, drawn = 0, width = 0, height = 0;
    fields >> id >> bars >> drawn >> width >> height;
    charts[id] = {bars, drawn, width, height};
  }
  // 4 trained cells and 1 evaluation-only one: 4 training and 5 evaluation speedups; PyTorch ratios where
  // the peer measured (one peer is n/a); 4 split bars × 4 non-zero parts (data-wait, forward, backward, optimizer).
  const std::map<std::string, long> want_bars{
      {"speedup-train", 4}, {"speedup-eval", 5}, {"vs-pytorch", 3}, {"vs-pytorch-eval", 4}, {"time-split", 16}};
  for (const auto& [id, bars] : want_bars) {
    ASSERT_TRUE(charts.count(id)) << id << " not in the rendered DOM: " << dom.substr(start, 400);
    EXPECT_EQ(charts[id][0], bars) << id;
    EXPECT_EQ(charts[id][1], bars) << id << ": bars without positive size, fill, or outside the chart";
    EXPECT_GT(charts[id][2], 100) << id;
    EXPECT_GT(charts[id][3], 100) << id;
  }
}

TEST(BenchReport, WriteReportsWritesFourFilesOrNamesTheOneItCannot) {
  const fastloop::test::TempDir tmp;
  const std::filesystem::path dir = tmp.path();
  const auto paths = fastloop::bench_write_reports(hand_built_result(), (dir / "grid").string());
  ASSERT_EQ(paths.size(), 4u);
  for (const char* ext : {".md", ".csv", ".json", ".html"})
    EXPECT_GT(std::filesystem::file_size(dir / (std::string("grid") + ext)), 100u) << ext;
  try {
    fastloop::bench_write_reports(hand_built_result(), (dir / "missing" / "grid").string());
    ADD_FAILURE() << "no InputError for a missing folder";
  } catch (const fastloop::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("missing/grid.md"), std::string::npos) << e.what();
  }
}
