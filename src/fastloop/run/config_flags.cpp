// TrainConfig fields as CLI11 flags: the help and allowed values come from config_fields().
#include "fastloop/run/config_flags.h"

#include <cstring>

namespace fastloop {

void config_flags_add(CLI::App& command, TrainConfig& config) {
  for (auto& field : config_fields(config)) {
    std::visit(
        [&](auto* target) {
          using T = std::remove_pointer_t<decltype(target)>;
          if constexpr (std::is_same_v<T, bool>) {
            const std::string name = field.flag.substr(2);
            command.add_flag(field.flag + ",!--no-" + name, *target, field.help + " (--no-" + name + " turns it off)")
                ->default_val(*target);
          } else if (!field.implicit.empty()) {  // `--resume` alone, or `--resume auto`
            command.add_flag(field.flag + "{" + field.implicit + "}", *target, field.help)
                ->expected(0, 1)
                ->default_val(*target)
                ->check(CLI::IsMember(field.allowed));
          } else {
            auto* option = command.add_option(field.flag, *target, field.help)->capture_default_str();
            if (!field.allowed.empty()) option->check(CLI::IsMember(field.allowed));
          }
        },
        field.target);
  }
}

std::set<std::string> config_flags_given(const CLI::App& command, TrainConfig& config) {
  std::set<std::string> given;
  for (const auto& field : config_fields(config))
    if (command.count(field.flag) > 0) given.insert(field.flag);
  return given;
}

std::string config_recipe_from_args(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) break;
    if (std::strcmp(argv[i], "--config") == 0 && i + 1 < argc) return argv[i + 1];
    if (std::strncmp(argv[i], "--config=", 9) == 0) return argv[i] + 9;
  }
  return "";
}

} // namespace fastloop
