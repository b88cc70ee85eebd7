// --perf auto: turns on the techniques that pay on the detected hardware and says why, one line
// per decision. Results stay within the techniques' tested tolerances.
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/core/env.h"

#include <set>
#include <string>
#include <vector>

namespace fastloop {

struct PerfHardware {
  CpuInfo cpu;
  bool cuda = false;
  int64_t cuda_major = 0;  // compute capability major, when cuda (8: bf16 tensor cores)
};

PerfHardware perf_hardware_detect();

/// Sets config.perf (and loader workers) for `hardware`; returns the decisions, one line each. A setting
/// whose flag is in `given` (e.g. "--amp", given on the command line) keeps its value: flags win over auto.
std::vector<std::string> perf_auto_apply(TrainConfig& config, const PerfHardware& hardware,
                                         const std::set<std::string>& given = {});

/// The autocast precisions a time-budgeted run times in its calibration, keeping the faster: {"bf16",
/// "off"} when --perf auto chose bf16 for a CPU from its flags (native bf16 is not always the faster: on
/// a 2-core Xeon with avx512_bf16 and no AMX, float32 trained the default recipe 15-25% faster) and
/// --amp was not given; else none (the config's precision stands).
std::vector<std::string> perf_auto_amp_candidates(const TrainConfig& config, const PerfHardware& hardware,
                                                  const std::set<std::string>& given = {});

} // namespace fastloop
