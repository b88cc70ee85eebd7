// Files the user names with --out (bench reports, tune recipes and tables): written one way, and a file
// that cannot be written is an input error (the CLI exits 2) whichever command it was.
#pragma once

#include <string>

namespace fastloop {

/// Writes `text` to `path`, replacing it. Throws InputError naming the path and the system's reason
/// ("--out: cannot write …") when it cannot; folders are not created.
void out_file_write(const std::string& path, const std::string& text);

} // namespace fastloop
