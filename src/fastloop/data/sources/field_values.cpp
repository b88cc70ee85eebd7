// Field checks with simdjson's DOM parser: one parser per thread (its buffers are reused sample after sample).
#include "fastloop/data/sources/field_values.h"

#include <simdjson.h>

#include <cstring>

namespace fastloop {
namespace {

simdjson::dom::parser& thread_parser() {
  thread_local simdjson::dom::parser parser;
  return parser;
}

}  // namespace

bool field_utf8_valid(std::string_view text) { return simdjson::validate_utf8(text.data(), text.size()); }

std::string field_json_check(std::string_view text, const std::string& key) {
  simdjson::dom::element doc;
  if (const auto error = thread_parser().parse(text.data(), text.size()).get(doc))
    return std::string("not valid JSON (") + simdjson::error_message(error) + ")";
  if (key.empty()) return "";
  simdjson::dom::object object;
  if (doc.get(object)) return "not a JSON object, so it has no key '" + key + "'";
  simdjson::dom::element value;
  if (object.at_key(key).get(value)) return "no key '" + key + "'";
  return "";
}

std::string field_json_value(std::string_view text, const std::string& key) {
  simdjson::dom::element doc;
  simdjson::dom::element value;
  if (thread_parser().parse(text.data(), text.size()).get(doc) || doc.at_key(key).get(value)) return "null";
  return simdjson::minify(value);
}

std::optional<int64_t> field_int_parse(std::string_view text) {
  while (!text.empty() && std::strchr(" \t\r\n", text.front())) text.remove_prefix(1);
  while (!text.empty() && std::strchr(" \t\r\n", text.back())) text.remove_suffix(1);
  const bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  if (text.empty() || text.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return negative ? -v : v;
}

}  // namespace fastloop
