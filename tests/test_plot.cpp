// `fastloop plot`: the --metrics reader (what a run writes parses back; malformed lines are input errors
// naming file and line; a resumed run's appended lines continue the curve), the command on two real runs,
// and the page in headless Chromium: every chart drawn with one line per run inside its frame.
#include "test_support.h"
#include "fastloop/core/errors.h"
#include "fastloop/io/metrics_file.h"
#include "fastloop/plot/plot.h"
#include "fastloop/train/trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

namespace fastloop {
namespace {

const char* const kRun =
    R"({"kind":"step","epoch":0,"step":10,"train_loss":1.5,"lr":0.01,"img_per_s":2400,"data_wait_s":0.01,"elapsed_s":1.5})"
    "\n"
    R"({"kind":"step","epoch":0,"step":20,"train_loss":null,"lr":0.02,"img_per_s":2500,"data_wait_s":0.0,"elapsed_s":2.5})"
    "\n\n"
    R"({"kind":"epoch","epoch":0,"step":20,"train_loss":1.1,"test_loss":0.9,"test_acc":0.71,"img_per_s":2450,"elapsed_s":3})"
    "\n"
    R"({"kind":"note","text":"lines of other kinds are skipped"})"
    "\n";

TEST(MetricsRead, StepAndEpochLinesParseWithNullAsNaN) {
  const MetricsRun run = metrics_parse(kRun, "run.jsonl");
  EXPECT_EQ(run.name, "run.jsonl");
  ASSERT_EQ(run.steps.size(), 2u);
  ASSERT_EQ(run.epochs.size(), 1u);
  EXPECT_EQ(run.steps[0].step, 10);
  EXPECT_EQ(run.steps[0].train_loss, 1.5);
  EXPECT_EQ(run.steps[1].lr, 0.02);
  EXPECT_TRUE(std::isnan(run.steps[1].train_loss)) << "a NaN loss is written as null";
  EXPECT_TRUE(std::isnan(run.steps[0].test_acc));
  EXPECT_EQ(run.epochs[0].test_acc, 0.71);
  EXPECT_EQ(run.epochs[0].elapsed_s, 3.0);
}

TEST(MetricsFile, WhatTheWriterWritesTheReaderReadsBack) {
  const test::TempDir tmp;
  const std::string path = tmp / "run.jsonl";
  {
    MetricsWriter writer(path);
    writer.record("plan", R"({"epochs":2})");
    StepReport step;
    step.step = 10, step.train_loss = 1.25, step.lr = 0.5, step.img_per_s = 300, step.elapsed_s = 2;
    writer.step(step);
    step.step = 20, step.train_loss = NAN, step.elapsed_s = 4;  // a NaN loss goes out as null
    writer.step(step);
    EpochReport epoch;
    epoch.step = 20, epoch.train_loss = 1.0, epoch.test_loss = 0.75, epoch.test_acc = 0.625, epoch.elapsed_s = 5;
    writer.epoch(epoch);
  }
  const MetricsRun run = metrics_read(path);
  ASSERT_EQ(run.steps.size(), 2u);
  ASSERT_EQ(run.epochs.size(), 1u);
  EXPECT_EQ(run.steps[0].step, 10);
  EXPECT_EQ(run.steps[0].train_loss, 1.25);
  EXPECT_EQ(run.steps[0].lr, 0.5);
  EXPECT_EQ(run.steps[0].img_per_s, 300);
  EXPECT_EQ(run.steps[1].elapsed_s, 4);
  EXPECT_TRUE(std::isnan(run.steps[1].train_loss));
  EXPECT_EQ(run.epochs[0].test_loss, 0.75);
  EXPECT_EQ(run.epochs[0].test_acc, 0.625);
  EXPECT_EQ(run.epochs[0].elapsed_s, 5);
}

TEST(MetricsRead, MalformedLinesAreInputErrorsNamingFileAndLine) {
  const test::TempDir tmp;
  const std::string good = R"({"kind":"step","step":1,"elapsed_s":1})";
  const std::map<std::string, std::string> bad = {
      {"{\"kind\":\"step\",", "not valid JSON"},
      {"[1, 2]", "not a JSON object"},
      {R"({"step":1,"elapsed_s":1})", "no \"kind\" string"},
      {R"({"kind":"step","elapsed_s":1})", "no \"step\" number"},
      {R"({"kind":"epoch","step":"3","elapsed_s":1})", "\"step\" is not a number"},
      {R"({"kind":"step","step":1,"elapsed_s":1,"lr":"fast"})", "\"lr\" is not a number"},
      {R"({"kind":"step","step":1,"elapsed_s":1,"lr":1e999})", "not valid JSON"},  // nlohmann: overflow
      {R"({"kind":"step","step":-1,"elapsed_s":1})", "\"step\" and \"elapsed_s\" must be >= 0"},
  };
  for (const auto& [line, why] : bad) {
    try {
      metrics_parse(good + "\n" + line + "\n", "m.jsonl");
      ADD_FAILURE() << "no InputError for " << line;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("m.jsonl line 2: " + why), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(metrics_parse("\n\n", "empty.jsonl"), InputError);
  EXPECT_THROW(metrics_read(tmp.sub("plot_missing") + "/none.jsonl"), InputError);
}

TEST(MetricsRead, AResumedRunsLinesContinueTheCurve) {
  // Steps 5 and 10, then a resume from the checkpoint at step 6 whose clock restarts: its first line (step 8)
  // replaces the old step 10, and its time follows on from 10 s.
  const std::string text = R"({"kind":"step","step":5,"elapsed_s":5,"train_loss":2})" "\n"
                           R"({"kind":"step","step":10,"elapsed_s":10,"train_loss":1})" "\n"
                           R"({"kind":"step","step":8,"elapsed_s":2,"train_loss":1.5})" "\n";
  const MetricsRun run = metrics_parse(text, "resumed.jsonl");
  ASSERT_EQ(run.steps.size(), 2u);
  EXPECT_EQ(run.steps[1].step, 8);
  EXPECT_EQ(run.steps[1].elapsed_s, 12.0);
}

/// A tiny run's --metrics file: 2 epochs of 16 steps, a line every 4 steps.
std::string metrics_of_run(const std::string& dir, const std::string& name, double lr) {
  TrainConfig config = test::tiny_config(512, 32);
  config.run.epochs = 2;
  config.run.log_every = 4;
  config.optim.lr = lr;
  config.run.metrics = dir + "/" + name;
  TrainControl control;
  control.progress = false;
  train(config, control);
  return config.run.metrics;
}

TEST(Plot, CommandDrawsTwoRunsAndRefusesMalformedFiles) {
  const test::TempDir tmp;
  const std::string dir = tmp.sub("plot_cli");
  const std::string a = metrics_of_run(dir, "a.jsonl", 0.05), b = metrics_of_run(dir, "b.jsonl", 0.1);
  const MetricsRun run = metrics_read(a);
  EXPECT_EQ(run.steps.size(), 8u);
  EXPECT_EQ(run.epochs.size(), 2u);
  const auto ok = test::cli_run("plot " + a + " " + b + " --out " + dir + "/curves.html");
  ASSERT_EQ(ok.code, 0) << ok.output;
  EXPECT_NE(ok.output.find("2 runs, 20 points"), std::string::npos) << ok.output;
  std::ifstream page(dir + "/curves.html");
  const std::string html((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("id=\"accuracy-time\""), std::string::npos);
  EXPECT_NE(html.find(b), std::string::npos) << "the runs table names each file";
  std::ofstream(dir + "/bad.jsonl") << "{\"kind\":\"step\",\"step\":1,\"elapsed_s\":1}\nnot json\n";
  const auto bad = test::cli_run("plot " + a + " " + dir + "/bad.jsonl --out " + dir + "/x.html");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("bad.jsonl line 2: not valid JSON"), std::string::npos) << bad.output;
}

/// 3 epochs of 10 log lines; `scale` separates the runs' curves.
MetricsRun synthetic_run(const std::string& name, double scale) {
  MetricsRun run;
  run.name = name;
  for (int i = 1; i <= 30; ++i) {
    MetricsPoint p{};
    p.step = 10.0 * i, p.elapsed_s = scale * i, p.train_loss = 2.0 / (i * scale), p.lr = 0.1 * scale * (i < 15 ? i : 30 - i);
    p.img_per_s = 1000 * scale + i, p.test_loss = p.test_acc = NAN;
    run.steps.push_back(p);
    if (i % 10 != 0) continue;
    p.test_loss = 1.0 / (i * scale), p.test_acc = 0.5 + 0.005 * i * scale, p.lr = NAN;
    run.epochs.push_back(p);
  }
  return run;
}

TEST(Plot, CurvesRenderInHeadlessChromium) {
  const test::TempDir tmp;
  const auto which = test::shell_run("command -v chromium || command -v chromium-browser || command -v google-chrome");
  std::string chromium = which.output.substr(0, which.output.find('\n'));
  if (which.code != 0 || chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs it)";
  std::string html = plot_html({synthetic_run("first.jsonl", 1.0), synthetic_run("second.jsonl", 2.0)});
  // The page has no script; the probe measures each chart's lines and markers as laid out and writes
  // "id lines drawn markers width height" into the DOM, which --dump-dom prints.
  const std::string probe = R"(<pre id="probe"></pre><script>
var out = [];
document.querySelectorAll('svg.chart').forEach(function (svg) {
  var box = svg.getBoundingClientRect(), lines = svg.querySelectorAll('polyline.series'), drawn = 0;
  lines.forEach(function (line) {
    var b = line.getBoundingClientRect(), stroke = getComputedStyle(line).stroke;
    var inside = b.left >= box.left - 2 && b.right <= box.right + 2 && b.top >= box.top - 2 && b.bottom <= box.bottom + 2;
    if ((b.width > 0 || b.height > 0) && inside && stroke && stroke !== 'none') drawn++;
  });
  out.push(svg.id + ' ' + lines.length + ' ' + drawn + ' ' + svg.querySelectorAll('circle.marker').length + ' ' +
           Math.round(box.width) + ' ' + Math.round(box.height));
});
document.getElementById('probe').textContent = out.join(';');
</script>)";
  html.insert(html.rfind("</body>"), probe);
  const std::string dir = tmp.sub("plot_chromium");
  std::ofstream(dir + "/curves.html") << html;
  const auto dom = test::shell_run("timeout 120 '" + chromium + "' --headless --no-sandbox --disable-gpu --user-data-dir='" +
                                   dir + "/profile' --dump-dom 'file://" + dir + "/curves.html' 2>/dev/null");
  const size_t start = dom.output.find("<pre id=\"probe\">");
  ASSERT_NE(start, std::string::npos) << "chromium printed no DOM: " << dom.output.substr(0, 500);
  std::istringstream probed(dom.output.substr(start + 16, dom.output.find("</pre>", start) - start - 16));
  std::map<std::string, std::vector<long>> charts;  // id → lines, drawn, markers, width, height
  for (std::string line; std::getline(probed, line, ';');) {
    std::istringstream fields(line);
    std::string id;
    long lines = 0, drawn = 0, markers = 0, width = 0, height = 0;
    fields >> id >> lines >> drawn >> markers >> width >> height;
    charts[id] = {lines, drawn, markers, width, height};
  }
  // Per run: loss has the training line and the test line (3 epochs: 3 markers), accuracy the test line.
  const std::map<std::string, std::vector<long>> want = {  // lines, markers
      {"loss", {4, 6}}, {"accuracy", {2, 6}}, {"lr", {2, 0}}, {"img-per-s", {2, 0}}};
  for (const auto& [metric, expected] : want)
    for (const char* axis : {"-step", "-time"}) {
      const std::string id = metric + axis;
      ASSERT_TRUE(charts.count(id)) << id << " not in the rendered DOM";
      EXPECT_EQ(charts[id][0], expected[0]) << id;
      EXPECT_EQ(charts[id][1], expected[0]) << id << ": lines without extent, stroke, or outside the chart";
      EXPECT_EQ(charts[id][2], expected[1]) << id;
      EXPECT_GT(charts[id][3], 300) << id;
      EXPECT_GT(charts[id][4], 200) << id;
    }
}

}  // namespace
}  // namespace fastloop
