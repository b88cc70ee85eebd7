// Errors to exit codes for every fastloop command line (the executable's main() and train_main()).
#include "fastloop/run/exit_code.h"

#include "fastloop/core/errors.h"

#include <c10/util/Exception.h>

#include <cstdio>

namespace fastloop {

int exit_code_run(const std::function<int()>& command) {
  try {
    return command();
  } catch (const InputError& e) {
    std::fprintf(stderr, "\nerror: %s\n", e.what());
    return 2;
  } catch (const RunError& e) {
    std::fprintf(stderr, "\nerror: %s\n", e.what());
    return 3;
  } catch (const c10::Error& e) {
    std::fprintf(stderr, "\nerror: %s\n", e.what_without_backtrace());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "\nerror: %s\n", e.what());
    return 1;
  }
}

} // namespace fastloop
