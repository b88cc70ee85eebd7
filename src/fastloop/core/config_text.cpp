// TrainConfig settings as text and as a TOML recipe.
#include "fastloop/core/config_text.h"

#include "fastloop/core/errors.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <sstream>

namespace fastloop {

namespace {

const ConfigField& field_of(const std::vector<ConfigField>& fields, const std::string& key) {
  for (const auto& f : fields)
    if (f.key == key) return f;
  throw InputError("unknown setting '" + key + "'");
}

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.10g", value);
  std::string s = text;
  // A TOML float needs a fraction or an exponent; config_load_toml accepts either for doubles.
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string toml_value(const ConfigField::Target& target) {
  return std::visit(
      [](auto* value) -> std::string {
        using T = std::remove_pointer_t<decltype(value)>;
        if constexpr (std::is_same_v<T, bool>) return *value ? "true" : "false";
        else if constexpr (std::is_same_v<T, int64_t>) return std::to_string(*value);
        else if constexpr (std::is_same_v<T, double>) return number_text(*value);
        else return nlohmann::json(*value).dump();  // a JSON string is a valid TOML basic string
      },
      target);
}

}  // namespace

std::string config_field_text(const TrainConfig& config, const std::string& key) {
  TrainConfig copy = config;
  const auto fields = config_fields(copy);
  return std::visit(
      [](auto* value) -> std::string {
        using T = std::remove_pointer_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::string>) return *value;
        else return toml_value(ConfigField::Target(value));
      },
      field_of(fields, key).target);
}

void config_field_set(TrainConfig& config, const std::string& key, const std::string& text) {
  const auto fields = config_fields(config);
  const ConfigField& field = field_of(fields, key);
  std::visit(
      [&](auto* value) {
        using T = std::remove_pointer_t<decltype(value)>;
        std::istringstream in(text);
        if constexpr (std::is_same_v<T, bool>) {
          if (text != "true" && text != "false") throw InputError(key + ": '" + text + "' is not true or false");
          *value = text == "true";
        } else if constexpr (std::is_same_v<T, std::string>) {
          *value = text;
        } else {
          T parsed{};
          if (!(in >> parsed) || !in.eof()) throw InputError(key + ": '" + text + "' is not a number");
          *value = parsed;
        }
      },
      field.target);
}

std::string config_to_toml(const TrainConfig& config, const std::map<std::string, std::string>& comments) {
  TrainConfig copy = config;
  std::ostringstream out;
  std::string section;
  for (const auto& field : config_fields(copy)) {
    const auto dot = field.key.find('.');
    const std::string table = field.key.substr(0, dot), name = field.key.substr(dot + 1);
    if (table != section) {
      out << (section.empty() ? "" : "\n") << "[" << table << "]\n";
      section = table;
    }
    if (auto it = comments.find(field.key); it != comments.end()) out << "# " << it->second << "\n";
    out << name << " = " << toml_value(field.target) << "\n";
  }
  return out.str();
}

} // namespace fastloop
