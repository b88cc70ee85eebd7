// The error of a data spec that does not parse (data_spec.h).
#include "fastloop/data/sources/data_spec.h"

#include "fastloop/core/errors.h"

namespace fastloop {

void data_spec_fail(const std::string& spec, const std::string& why) {
  throw InputError("data spec '" + spec + "': " + why + "; allowed forms: " + kDataSpecForms);
}

} // namespace fastloop
