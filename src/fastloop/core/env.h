// Facts about this machine and process that several commands need (threads defaults, doctor, bench headers).
#pragma once

#include <cstdint>

namespace fastloop {

/// CPU cores this process may run on (its affinity mask), at least 1.
int64_t usable_cores();

/// Applies the intra-op thread count; 0 means usable_cores().
void threads_apply(int64_t threads);

} // namespace fastloop
