// config_set(): a field of TrainConfig by TOML key, short name or flag, through config_fields()'s table.
#include "fastloop/core/config_set.h"

#include "fastloop/core/errors.h"
#include "fastloop/core/text.h"

#include <algorithm>
#include <vector>

namespace fastloop {
namespace {

std::string flag_of(std::string key) {  // "max_steps" or "--max-steps" -> "--max-steps"
  if (key.rfind("--", 0) != 0) key = "--" + key;
  std::replace(key.begin(), key.end(), '_', '-');
  return key;
}

const ConfigField& field_named(const std::vector<ConfigField>& fields, const std::string& key) {
  std::vector<const ConfigField*> matches;
  for (const auto& f : fields)
    if (f.key == key) return f;
  for (const auto& f : fields)
    if (f.key.substr(f.key.find('.') + 1) == key || f.flag == flag_of(key)) matches.push_back(&f);
  if (matches.size() == 1) return *matches.front();
  std::vector<std::string> keys;
  for (const auto* f : matches) keys.push_back(f->key);
  if (!matches.empty()) throw InputError("setting '" + key + "' is ambiguous: say " + join(keys));
  for (const auto& f : fields) keys.push_back(f.key);
  throw InputError("unknown setting '" + key + "'; known settings: " + join(keys));
}

const char* type_name(const ConfigField::Target& target) {
  switch (target.index()) {
    case 0: return "a whole number";
    case 1: return "a number";
    case 2: return "True or False";
    default: return "a string";
  }
}

}  // namespace

std::string config_set(TrainConfig& config, const std::string& key, const ConfigValue& value) {
  auto fields = config_fields(config);
  const ConfigField& field = field_named(fields, key);
  const bool ok = std::visit(
      [&](auto* target) {
        using T = std::remove_pointer_t<decltype(target)>;
        if (const T* v = std::get_if<T>(&value)) return *target = *v, true;
        if constexpr (std::is_same_v<T, double>) {
          if (const int64_t* i = std::get_if<int64_t>(&value)) return *target = static_cast<double>(*i), true;
        }
        return false;
      },
      field.target);
  if (!ok) throw InputError("setting '" + key + "' (" + field.flag + ") must be " + type_name(field.target));
  if (!field.allowed.empty()) {
    const std::string& v = *std::get<std::string*>(field.target);
    if (std::find(field.allowed.begin(), field.allowed.end(), v) == field.allowed.end())
      throw InputError("setting '" + key + "' = '" + v + "' is not one of: " + join(field.allowed));
  }
  return field.flag;
}

} // namespace fastloop
