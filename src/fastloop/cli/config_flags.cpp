// TrainConfig fields as CLI11 flags: the help and allowed values come from config_fields().
#include "commands.h"

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
          } else {
            auto* option = command.add_option(field.flag, *target, field.help)->capture_default_str();
            if (!field.allowed.empty()) option->check(CLI::IsMember(field.allowed));
          }
        },
        field.target);
  }
}

} // namespace fastloop
