/*
 * Poisoning memory kept for reuse, so that ASan still reports a use of it
 * while it is kept (buffer caches: src/io/buf_cache.c, tools/simhost/din_cache.c).
 * VAAID_ASAN is 1 in an ASan build (gcc or clang), else 0; VAAID_POISON and
 * VAAID_UNPOISON do nothing without ASan, VAAID_IS_POISONED is then 0.
 */
#ifndef VAAID_ASAN_POISON_H
#define VAAID_ASAN_POISON_H

#if defined(__SANITIZE_ADDRESS__)
#define VAAID_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VAAID_ASAN 1
#endif
#endif
#ifndef VAAID_ASAN
#define VAAID_ASAN 0
#endif

#if VAAID_ASAN
#include <sanitizer/asan_interface.h>
#define VAAID_POISON(p, n) __asan_poison_memory_region((p), (n))
#define VAAID_UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#define VAAID_IS_POISONED(p) __asan_address_is_poisoned(p)
#else
#define VAAID_POISON(p, n) ((void)(p), (void)(n))
#define VAAID_UNPOISON(p, n) ((void)(p), (void)(n))
#define VAAID_IS_POISONED(p) ((void)(p), 0)
#endif

#endif
