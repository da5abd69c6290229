/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Logging to stderr with a level. */
#ifndef BFBPF_LOG_H
#define BFBPF_LOG_H

#include <stdbool.h>
#include <stdint.h>

enum log_level { LOG_LEVEL_ERROR, LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

void log_set_level(enum log_level level);
int log_level_from_name(const char *name, enum log_level *out);
/* Routes libbpf's own messages through log_message at matching levels. */
void log_capture_libbpf(void);
/* Silence libbpf while probing something expected to fail. */
void log_set_libbpf_quiet(bool quiet);
void log_message(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Is this level logged? (Skip measuring what nobody will read.) */
bool log_enabled(enum log_level level);
/* Milliseconds on CLOCK_MONOTONIC, fractional: for the timings debug lines give. */
double log_clock_ms(void);
/* Whole milliseconds on CLOCK_MONOTONIC: deadlines and rates (they survive clock changes). */
uint64_t log_monotonic_ms(void);

#define log_error(...) log_message(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...) log_message(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...) log_message(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_message(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif /* BFBPF_LOG_H */
