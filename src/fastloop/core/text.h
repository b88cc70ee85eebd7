// Small text helpers shared by the error messages and reports: one copy instead of one per file.
#pragma once

#include <string>
#include <vector>

namespace fastloop {

/// "a, b, c": the items with `separator` between them ("" for none).
inline std::string join(const std::vector<std::string>& items, const std::string& separator = ", ") {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : std::string()) + items[i];
  return out;
}

} // namespace fastloop
