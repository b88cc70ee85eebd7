// Small text helpers shared by the error messages, reports and CSV writers: one copy instead of one per file.
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

/// `field` as one CSV field (RFC 4180): in double quotes, its quotes doubled, when it holds a comma, a
/// quote or a line break; as it is otherwise.
inline std::string csv_field(const std::string& field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

/// `s` with ASCII's capitals in lower case (other bytes as they are): for extensions, keys and CSV headers.
inline std::string ascii_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

/// `s` without the spaces and tabs at its ends.
inline std::string trim_blanks(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

} // namespace fastloop
