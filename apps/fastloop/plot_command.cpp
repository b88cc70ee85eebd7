// `fastloop plot METRICS.jsonl [more.jsonl ...] --out curves.html`: the training curves of one or more
// runs (their `train --metrics` files) as one offline HTML page with SVG charts.
#include "commands.h"

#include "fastloop/core/out_file.h"
#include "fastloop/plot/plot.h"

#include <cstdio>
#include <memory>

namespace fastloop {

namespace {
struct PlotFlags {
  std::vector<std::string> files;
  std::string out = "curves.html";
};
}  // namespace

Subcommand plot_command(CLI::App& root) {
  auto* app = root.add_subcommand(
      "plot", "Draw loss, accuracy, learning rate and img/s of runs' --metrics files into one HTML page");
  auto flags = std::make_shared<PlotFlags>();
  app->add_option("files", flags->files, "JSON-lines files written by `fastloop train --metrics FILE`")->required();
  app->add_option("--out", flags->out, "HTML page to write (default curves.html)");
  return {app, [flags] {
            std::vector<MetricsRun> runs;
            size_t points = 0;
            for (const std::string& file : flags->files) {
              runs.push_back(metrics_read(file));
              points += runs.back().steps.size() + runs.back().epochs.size();
            }
            out_file_write(flags->out, plot_html(runs));
            std::printf("wrote %s: %zu run%s, %zu points\n", flags->out.c_str(), runs.size(), runs.size() == 1 ? "" : "s",
                        points);
            return 0;
          }};
}

} // namespace fastloop
