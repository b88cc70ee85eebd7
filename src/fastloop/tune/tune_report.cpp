// What `fastloop tune` writes: the table of trials (markdown, JSON) and the winning recipe (TOML).
#include "fastloop/tune/tuner.h"

#include "fastloop/core/config_text.h"
#include "fastloop/core/env.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <sstream>

namespace fastloop {

namespace {

std::string format(const char* fmt, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), fmt, value);
  return text;
}

std::string machine_line() {
  const CpuInfo cpu = cpu_info();
  return cpu.model + ", " + std::to_string(cpu.logical_cores) + " usable cores";
}

}  // namespace

const char* trial_verdict_name(TrialVerdict verdict) {
  switch (verdict) {
    case TrialVerdict::baseline: return "baseline";
    case TrialVerdict::kept: return "kept";
    case TrialVerdict::not_faster: return "not_faster";
    case TrialVerdict::pruned_slower: return "pruned_slower";
    case TrialVerdict::rejected: return "rejected";
    case TrialVerdict::failed: return "failed";
  }
  return "unknown";
}

std::string tune_verdict_text(const TuneTrial& trial) {
  const std::string name = trial_verdict_name(trial.verdict);
  return trial.reason.empty() ? name : name + ": " + trial.reason;
}

std::string tune_markdown(const TuneResult& result) {
  const TuneTrial& best = result.best();
  std::ostringstream out;
  out << "# fastloop tune: " << best.config.model.name << " on " << best.config.data.source << "\n\n"
      << "Machine: " << machine_line() << ". " << result.trials.size() << " trials in "
      << format("%.0f", result.seconds) << " s; each: " << "warm-up excluded, median step time.\n\n"
      << "Winner: trial " << best.index << " (" << best.change << "), " << format("%.1f", best.result.img_per_s)
      << " img/s = " << format("%.2f", best.result.img_per_s / result.trials[0].result.img_per_s)
      << "x the starting configuration (" << format("%.1f", result.trials[0].result.img_per_s) << " img/s).\n\n"
      << "| # | change (on the best so far) | img/s | step ms | first loss | verdict |\n"
      << "|---:|---|---:|---:|---:|---|\n";
  for (const auto& t : result.trials) {
    out << "| " << t.index << (t.index == result.winner ? " **winner**" : "") << " | " << t.change << " | "
        << (t.result.ok ? format("%.1f", t.result.img_per_s) : "—") << " | "
        << (t.result.ok ? format("%.1f", t.result.step_s * 1e3) : "—") << " | "
        << (t.result.ok ? format("%.5f", t.result.first_loss) : "—") << " | " << tune_verdict_text(t) << " |\n";
  }
  out << "\n## Choices\n\n";
  for (const auto& c : result.choices) out << "- `" << c.key << " = " << c.value << "`: " << c.reason << "\n";
  if (!result.notes.empty()) {
    out << "\n## Notes\n\n";
    for (const auto& n : result.notes) out << "- " << n << "\n";
  }
  return out.str();
}

std::string tune_json(const TuneResult& result) {
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& t : result.trials) {
    trials.push_back({{"index", t.index},
                      {"change", t.change},
                      {"ok", t.result.ok},
                      {"failure", t.result.failure},
                      {"img_per_s", t.result.img_per_s},
                      {"step_s", t.result.step_s},
                      {"first_loss", t.result.first_loss},
                      {"seconds", t.result.seconds},
                      {"key", t.key},
                      {"value", t.value},
                      {"verdict", trial_verdict_name(t.verdict)},
                      {"reason", t.reason},
                      {"config", nlohmann::json::parse(config_to_json(t.config))}});
  }
  nlohmann::json choices = nlohmann::json::array();
  for (const auto& c : result.choices) choices.push_back({{"key", c.key}, {"value", c.value}, {"reason", c.reason}});
  nlohmann::json out = {{"machine", machine_line()}, {"seconds", result.seconds}, {"winner", result.winner},
                        {"trials", trials},           {"choices", choices},       {"notes", result.notes}};
  return out.dump(2) + "\n";
}

std::string tune_recipe_toml(const TuneResult& result) {
  const TuneTrial& best = result.best();
  std::map<std::string, std::string> comments;
  for (const auto& c : result.choices) comments[c.key] = "tuned: " + c.reason;
  std::ostringstream out;
  out << "# Written by fastloop tune on " << machine_line() << ".\n"
      << "# " << format("%.1f", best.result.img_per_s) << " img/s vs "
      << format("%.1f", result.trials[0].result.img_per_s) << " for the configuration it started from ("
      << result.trials.size() << " trials). Use: fastloop train --config THIS_FILE\n";
  for (const auto& n : result.notes) out << "# " << n << "\n";
  out << "\n" << config_to_toml(best.config, comments);
  return out.str();
}

} // namespace fastloop
