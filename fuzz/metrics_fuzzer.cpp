// libFuzzer target for `fastloop plot`'s input, the --metrics JSON-lines files (metrics_parse), and the
// page drawn from whatever parses (plot_html): any bytes must parse or throw InputError, never crash or
// escape with another exception type.
#include "fastloop/core/errors.h"
#include "fastloop/io/metrics_file.h"
#include "fastloop/plot/plot.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const fastloop::MetricsRun run = fastloop::metrics_parse(text, "fuzz.jsonl");
    fastloop::plot_html({run, run});
  } catch (const fastloop::InputError&) {
  }
  return 0;
}
