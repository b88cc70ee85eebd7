// `fastloop train` as a library call: a program that registers its own model (model_register) gets the
// same command line, recipes, --perf auto, messages, Ctrl-C checkpoint and exit codes as the executable.
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/train/trainer.h"

#include <set>
#include <string>

namespace fastloop {

/// What `fastloop train` does once its flags are parsed: --perf auto (the flags in `given` keep their
/// values), the resolved config printed, training in which Ctrl-C or SIGTERM stops after the current step
/// (with a checkpoint when --checkpoint-dir is set; the signal handlers before the call are restored after
/// it), then the result line. `quiet`: none of those lines and no progress display. Returns the run's
/// summary (`stopped` when a signal ended it); errors propagate (exit_code_run() maps them).
TrainSummary train_run(TrainConfig& config, const std::set<std::string>& given, bool quiet = false);

/// The exit code of a run train_run() returned: 0 done, 130 stopped by a signal.
inline int train_exit_code(const TrainSummary& summary) { return summary.stopped ? 130 : 0; }

/// `fastloop train FLAGS...` for a program of your own: argv holds the flags (argv[0] the program), as
/// `fastloop train --help` lists them, `--config RECIPE.toml` included. Returns the exit code: 0 done,
/// 2 bad input (flag, recipe, data, model), 3 a run that cannot go on, 130 stopped, 1 anything else.
int train_main(int argc, char** argv);

} // namespace fastloop
