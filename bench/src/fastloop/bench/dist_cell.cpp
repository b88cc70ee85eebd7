// Multi-rank bench cells: launched ranks, their measurements handed back through a JSON file.
#include "fastloop/bench/dist_cell.h"

#include "fastloop/bench/bench_flags.h"

#include "fastloop/bench/rows.h"
#include "fastloop/core/env.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/dist/dist_env.h"
#include "fastloop/dist/launch.h"
#include "fastloop/dist/process_group.h"
#include "fastloop/train/runtime.h"

#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fastloop {

namespace {

using Json = nlohmann::json;

Json times_json(const CellTimes& times) {
  Json reps = Json::array();
  for (const auto& r : times.repetitions) {
    const TimeSplit& s = r.split;
    reps.push_back({{"train_img_per_s", r.train_img_per_s}, {"eval_img_per_s", r.eval_img_per_s},
                    {"split", {s.data_wait, s.copy, s.forward, s.backward, s.optimizer, s.communication}},
                    {"allreduces_per_step", r.allreduces_per_step}, {"comm_span_s", r.comm_span_s},
                    {"comm_exposed_s", r.comm_exposed_s}});
  }
  return {{"repetitions", reps}, {"train_peak_bytes", times.train_peak_bytes},
          {"eval_peak_bytes", times.eval_peak_bytes}, {"forward_flops", times.forward_flops},
          {"buckets", times.buckets}};
}

CellTimes times_from_json(const Json& j) {
  CellTimes times;
  for (const auto& r : j.at("repetitions")) {
    RepetitionTimes rep;
    rep.train_img_per_s = r.at("train_img_per_s");
    rep.eval_img_per_s = r.at("eval_img_per_s");
    const auto split = r.at("split").get<std::vector<double>>();
    if (split.size() != 6) throw std::runtime_error("time split of " + std::to_string(split.size()) + " parts, not 6");
    rep.split = {split[0], split[1], split[2], split[3], split[4], split[5]};
    rep.allreduces_per_step = r.at("allreduces_per_step");
    rep.comm_span_s = r.at("comm_span_s");
    rep.comm_exposed_s = r.at("comm_exposed_s");
    times.repetitions.push_back(rep);
  }
  if (times.repetitions.empty()) throw std::runtime_error("no repetitions");
  times.train_peak_bytes = j.at("train_peak_bytes");
  times.eval_peak_bytes = j.at("eval_peak_bytes");
  times.forward_flops = j.at("forward_flops");
  times.buckets = j.at("buckets");
  return times;
}

}  // namespace

CellTimes dist_cell_launch(const BenchOptions& options, const std::string& model, const std::string& row,
                           int64_t nproc, int64_t threads) {
  static std::atomic<int> counter{0};
  const std::string out = (std::filesystem::temp_directory_path() /
                           ("fastloop-bench-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + ".json"))
                              .string();
  std::vector<std::string> command = {options.cli, "bench",   "--models",          model,
                                      "--rows",    row,       "--threads", std::to_string(threads)};
  for (auto& arg : bench_rank_args(options)) command.push_back(std::move(arg));  // the grid's flag table
  command.insert(command.end(), {"--rank-cell", out});
  const int code = launch_ranks(LaunchOptions().nproc_per_node(nproc).master_port(0).announce(false), command);
  if (code != 0) {
    std::filesystem::remove(out);
    if (code == 130) throw RunError("stopped (Ctrl-C) during " + std::to_string(nproc) + "-rank cell " + model + " " + row);
    throw RunError("its ranks exited with code " + std::to_string(code) + " (their messages are above)");
  }
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(out);
  try {
    return times_from_json(Json::parse(text.str()));
  } catch (const std::exception& e) {
    throw RunError("rank 0 left no readable result in " + out + ": " + e.what());
  }
}

void dist_cell_rank_run(const BenchOptions& options, const std::string& out_path) {
  const DistEnv env = dist_env_detect();
  if (options.models.size() != 1 || options.rows.size() != 1)
    throw InputError("--rank-cell measures one cell: give one --models and one --rows");
  const c10::Device device = dist_device(device_resolve(options.device), env);
  threads_apply(options.threads);
  const DatasetSplits data = bench_data_load(options);
  std::optional<std::string> na;
  CellPlan plan = bench_cell_plan(options, options.models.front(), options.rows.front(), device,
                                  at::get_num_threads(), env.world_size, data, na);
  if (na) throw InputError("--rank-cell: row " + options.rows.front() + " cannot run: " + *na);
  DistConfig dist = plan.config.dist;
  dist.timeout_s = 300.0;  // a lost rank ends the cell within minutes, not the default's ten
  plan.group = process_group_join(dist, env, device);
  if (!plan.group)
    throw InputError("--rank-cell is one rank of `fastloop bench --nproc N`, which starts it with RANK and "
                     "WORLD_SIZE set; run that instead");
  const CellTimes times = cell_run(plan, data);
  if (plan.group->rank() != 0) return;
  const std::string temporary = out_path + ".tmp";
  {
    std::ofstream out(temporary);
    out << times_json(times).dump();
    if (!out.flush()) throw InputError("--rank-cell: cannot write " + temporary);
  }
  std::filesystem::rename(temporary, out_path);
}

} // namespace fastloop
