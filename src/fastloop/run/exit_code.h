// The one place where fastloop's command lines turn errors into messages and exit codes: input errors
// exit 2, runs that cannot go on 3, anything else 1. Library code throws; only a command line catches.
#pragma once

#include <functional>

namespace fastloop {

/// Runs `command` and returns its exit code; an exception is printed as one `error: ...` line on stderr
/// and becomes 2 (InputError), 3 (RunError) or 1 (anything else).
int exit_code_run(const std::function<int()>& command);

} // namespace fastloop
