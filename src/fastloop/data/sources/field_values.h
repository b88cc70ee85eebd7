// The checks and conversions a sample's other fields (text, JSON, integers) get in the loader's workers, so
// that the consumer turns a whole batch of them into Python objects at once: UTF-8 validation and JSON parsing
// by simdjson (the one file that includes it, with the flags simdjson.pc asks for), integers as webdataset's
// `int(text)` reads them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fastloop {

/// Whether `text` is valid UTF-8.
bool field_utf8_valid(std::string_view text);

/// `text` as JSON: empty when it parses (and, with a `key`, the top level is an object holding `key`); else
/// why not, in simdjson's words ("no key 'caption'" for a missing key).
std::string field_json_check(std::string_view text, const std::string& key = "");

/// The value of `key` in the JSON object `text` (which field_json_check passed), minified JSON text.
std::string field_json_value(std::string_view text, const std::string& key);

/// `text` as webdataset reads a .cls: a whole number, blanks around it allowed; nullopt otherwise.
std::optional<int64_t> field_int_parse(std::string_view text);

}  // namespace fastloop
