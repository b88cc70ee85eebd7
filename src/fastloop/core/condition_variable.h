// std::condition_variable, with wait() bound to the libstdc++ symbol that every libstdc++ since GCC 4.4 exports.
// Include it (not <condition_variable>) in a file that calls wait(): the binary wheel's glibc floor depends on it.
//
// GCC 12's libstdc++ exports wait(unique_lock<mutex>&) under a new version, GLIBCXX_3.4.30, and binds new code
// to it; that version makes a wheel manylinux_2_35 (Ubuntu 22.04 and RHEL 9 have GLIBCXX_3.4.29 at most). The
// two differ only under pthread_cancel (PR libstdc++/103382: the old one is noexcept, so cancelling a waiting
// thread terminates; the new one lets the cancellation unwind). fastloop never cancels a thread, so the old
// GLIBCXX_3.4.11 symbol does the same here, and the wheel stays manylinux_2_34 (scripts/wheel_check.sh checks it).
#pragma once

#include <condition_variable>

#if defined(__GLIBCXX__) && defined(_GLIBCXX_RELEASE) && _GLIBCXX_RELEASE >= 12 && defined(__ELF__)
__asm__(".symver _ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE,"
        "_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE@GLIBCXX_3.4.11");
#endif
