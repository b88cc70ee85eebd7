// `fastloop plot`: training curves of one or more runs (their --metrics files) as one offline HTML page
// with inline SVG line charts, like the bench report: training and test loss, test accuracy, learning
// rate and images/s, each against optimizer steps and against time.
#pragma once

#include "fastloop/io/metrics_file.h"

#include <string>
#include <vector>

namespace fastloop {

/// The page; one colour per run. Series with no finite value show "no data" in their chart.
std::string plot_html(const std::vector<MetricsRun>& runs);

} // namespace fastloop
