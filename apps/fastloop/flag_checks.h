// CLI11 checks of the subcommands' numeric flags, with a message a user can act on: "--topk: must be
// positive (got 0)". CLI::PositiveNumber and CLI::NonNegativeNumber print their range up to DBL_MAX, all
// 309 digits of it. The help keeps CLI11's names (INT:POSITIVE, INT:NONNEGATIVE).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace fastloop {

/// Accepts a number > 0 (`strict`) or >= 0.
inline CLI::Validator number_at_least_zero(bool strict) {
  return CLI::Validator(
      [strict](std::string& text) -> std::string {
        double value = 0.0;
        if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
        if (strict ? value > 0.0 : value >= 0.0) return std::string();
        return (strict ? "must be positive (got " : "must be 0 or more (got ") + text + ")";
      },
      strict ? "POSITIVE" : "NONNEGATIVE");
}

inline const CLI::Validator kPositive = number_at_least_zero(true);
inline const CLI::Validator kNonNegative = number_at_least_zero(false);

} // namespace fastloop
