// bench e2e: fastloop train in this process, the PyTorch peer as a child process, one pair at a time.
#include "fastloop/bench/e2e_bench.h"

#include "fastloop/bench/report_tables.h"

#include "fastloop/core/errors.h"
#include "fastloop/core/python_path.h"
#include "fastloop/core/shell.h"
#include "fastloop/core/stats.h"
#include "fastloop/train/trainer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace fastloop {

namespace {

using Json = nlohmann::json;

/// What the peer mirrors: a flag outside it would compare two different runs.
void peer_check(const TrainConfig& c) {
  auto refuse = [](bool bad, const std::string& what) {
    if (bad) throw InputError("bench e2e: the PyTorch peer (bench/peers/train_peer.py) trains " + what +
                              "; change the flag or run without --compare-python");
  };
  refuse(c.optim.name != "sgd" || !c.optim.nesterov, "SGD with Nesterov momentum only (--optim sgd --nesterov)");
  refuse(c.schedule.name != "onecycle", "with the one-cycle schedule only (--schedule onecycle)");
  refuse(c.perf.amp == "fp16", "on the CPU: --amp off or bf16");
  refuse(c.perf.accumulate != 1, "without accumulation (--accumulate 1)");
  refuse(c.data.source.rfind("cifar10", 0) != 0 && c.data.source.rfind("mnist", 0) != 0 &&
             c.data.source.rfind("fashion-mnist", 0) != 0 && c.data.source.rfind("synthetic", 0) != 0,
         "on fashion-mnist, mnist, cifar10 or synthetic data");
}

E2eRun fastloop_run(TrainConfig config) {
  config.run.time_budget = "off";  // the same epochs as the PyTorch peer, not the default recipe's 300 s
  TrainControl quiet;
  quiet.progress = false;
  const TrainSummary summary = train(config, quiet);
  return {summary.img_per_s, summary.train_seconds, summary.test.accuracy};
}

E2eRun python_run(const std::string& command, std::string& torch_version) {
  const CommandOutput output = command_output(command);
  if (!output.started || output.status != 0)
    throw RunError("bench e2e: the PyTorch peer failed (" + command + "); its messages are above");
  try {
    const Json j = Json::parse(output.out.substr(output.out.rfind('{')));
    torch_version = j.at("torch").get<std::string>();
    return {j.at("img_per_s").get<double>(), j.at("train_seconds").get<double>(), j.at("test_accuracy").get<double>()};
  } catch (const std::exception& e) {
    throw RunError("bench e2e: the PyTorch peer printed no result line (" + command + "): " + e.what());
  }
}

}  // namespace

std::string e2e_peer_command(const E2eBenchOptions& options) {
  const TrainConfig& c = options.config;
  peer_check(c);
  std::ostringstream command;
  command.precision(17);
  command << shell_quote(python_interpreter(options.python)) << ' ' << shell_quote(options.peer) << " --data " << shell_quote(c.data.source)
          << " --model " << shell_quote(c.model.name) << " --epochs " << c.run.epochs << " --batch-size "
          << c.data.batch_size << " --lr " << c.optim.lr << " --momentum " << c.optim.momentum << " --weight-decay "
          << c.optim.weight_decay << " --label-smoothing " << c.optim.label_smoothing << " --pct-start " << c.schedule.pct_start << " --crop-pad "
          << (c.data.augment ? c.data.crop_pad : 0) << " --amp " << c.perf.amp << " --threads " << c.run.threads
          << " --max-steps " << c.run.max_steps << " --anneal-strategy " << c.schedule.anneal_strategy;
  const bool flips = c.data.augment && c.data.flip;
  if (!flips) command << " --no-flip";
  // As train/setup.cpp resolves it: on and auto alternate the built-in flip of the in-memory data e2e accepts.
  if (flips && c.data.alternate_flip != "off" && c.data.transform.empty()) command << " --alternate-flip";
  if (whiten_stem_on(c.model)) command << " --whiten-stem";
  if (c.perf.channels_last) command << " --channels-last";
  return command.str();
}

E2eBenchResult e2e_bench_run(const E2eBenchOptions& options) {
  if (options.repeat < 1) throw InputError("--repeat must be at least 1, got " + std::to_string(options.repeat));
  if (options.config.perf.device == "cuda") throw InputError("bench e2e: --device cpu (the peer trains on the CPU)");
  E2eBenchResult result;
  result.options = options;
  if (options.compare_python) result.peer_command = e2e_peer_command(options);
  std::vector<double> ratios;
  for (int64_t r = 0; r < options.repeat; ++r) {
    E2ePair pair;
    const bool python_first = options.compare_python && r % 2 == 1;  // A B B A: neither side always first
    if (python_first) pair.python = python_run(result.peer_command, result.torch_version);
    pair.fastloop = fastloop_run(options.config);
    std::fprintf(stderr, "bench e2e %lld/%lld: fastloop %.1f img/s", static_cast<long long>(r + 1),
                 static_cast<long long>(options.repeat), pair.fastloop.img_per_s);
    if (options.compare_python) {
      if (!python_first) pair.python = python_run(result.peer_command, result.torch_version);
      pair.ratio = pair.fastloop.img_per_s / pair.python.img_per_s;
      ratios.push_back(pair.ratio);
      std::fprintf(stderr, ", PyTorch %.1f img/s, ratio %.3f", pair.python.img_per_s, pair.ratio);
    }
    std::fprintf(stderr, "\n");
    result.pairs.push_back(pair);
  }
  if (!ratios.empty()) {
    result.ratio_median = median(ratios);
    const Spread s = spread(ratios);
    result.ratio_min = s.min, result.ratio_max = s.max;
  }
  return result;
}

std::string e2e_bench_markdown(const E2eBenchResult& result) {
  const TrainConfig& c = result.options.config;
  std::ostringstream md;
  char line[256];
  md << "# fastloop train vs a plain PyTorch loop, end to end\n\n"
     << "model " << c.model.name << ", data " << c.data.source << ", batch " << c.data.batch_size << ", "
     << c.run.epochs << " epochs" << (c.run.max_steps ? " (max " + std::to_string(c.run.max_steps) + " steps)" : "")
     << ", amp " << c.perf.amp << ", channels_last " << (c.perf.channels_last ? "on" : "off") << ", "
     << c.data.workers << " loader workers, " << c.run.threads << " threads (0: all cores)\n\n";
  ReportTable pairs{"", "", {"pair", "fastloop img/s", "PyTorch img/s", "fastloop ÷ PyTorch", "fastloop acc", "PyTorch acc"}, {}};
  for (size_t i = 0; i < result.pairs.size(); ++i) {
    const E2ePair& p = result.pairs[i];
    pairs.rows.push_back({std::to_string(i + 1), report_fixed(p.fastloop.img_per_s, 1), report_fixed(p.python.img_per_s, 1),
                          report_fixed(p.ratio, 3), report_fixed(100 * p.fastloop.test_accuracy, 2) + "%",
                          report_fixed(100 * p.python.test_accuracy, 2) + "%"});
  }
  md << report_markdown(pairs);
  if (result.ratio_median > 0) {
    std::snprintf(line, sizeof line, "\nfastloop ÷ PyTorch: median %.3f, min %.3f, max %.3f over %zu interleaved pairs\n",
                  result.ratio_median, result.ratio_min, result.ratio_max, result.pairs.size());
    md << line << "\nPyTorch " << result.torch_version << ": `" << result.peer_command << "`\n";
  }
  return md.str();
}

std::string e2e_bench_json(const E2eBenchResult& result) {
  Json pairs = Json::array();
  for (const auto& p : result.pairs) {
    pairs.push_back({{"fastloop_img_per_s", p.fastloop.img_per_s}, {"fastloop_train_seconds", p.fastloop.train_seconds},
                     {"fastloop_test_accuracy", p.fastloop.test_accuracy}, {"python_img_per_s", p.python.img_per_s},
                     {"python_train_seconds", p.python.train_seconds},
                     {"python_test_accuracy", p.python.test_accuracy}, {"ratio", p.ratio}});
  }
  return Json{{"config", Json::parse(config_to_json(result.options.config))},
              {"pairs", pairs},
              {"ratio_median", result.ratio_median},
              {"ratio_min", result.ratio_min},
              {"ratio_max", result.ratio_max},
              {"peer_command", result.peer_command},
              {"torch_version", result.torch_version}}
      .dump(2);
}

} // namespace fastloop
