// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>

#include "log.h"

static enum log_level log_threshold = LOG_LEVEL_INFO;
static bool log_libbpf_quiet;
static const char *const log_level_names[] = {"error", "warn", "info", "debug"};

void log_set_level(enum log_level level)
{
	log_threshold = level;
}

int log_level_from_name(const char *name, enum log_level *out)
{
	for (size_t i = 0; i < sizeof(log_level_names) / sizeof(log_level_names[0]); i++) {
		if (!strcmp(name, log_level_names[i])) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

bool log_enabled(enum log_level level)
{
	return level <= log_threshold;
}

double log_clock_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

uint64_t log_monotonic_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
}

static void log_vmessage(enum log_level level, const char *fmt, va_list args)
{
	struct timespec now;
	struct tm tm;
	char stamp[32];

	if (level > log_threshold)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(stderr, "%s.%03ldZ bfbpf %s: ", stamp, now.tv_nsec / 1000000,
		log_level_names[level]);
	vfprintf(stderr, fmt, args);
	fputc('\n', stderr);
}

void log_message(enum log_level level, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	log_vmessage(level, fmt, args);
	va_end(args);
}

static int log_libbpf(enum libbpf_print_level level, const char *fmt, va_list args)
{
	enum log_level ours = level == LIBBPF_WARN ? LOG_LEVEL_WARN : LOG_LEVEL_DEBUG;
	char line[1024];
	size_t length;

	if (ours > log_threshold || log_libbpf_quiet)
		return 0;
	vsnprintf(line, sizeof(line), fmt, args);
	length = strlen(line);
	while (length && line[length - 1] == '\n')
		line[--length] = '\0';
	log_message(ours, "libbpf: %s", line);
	return 0;
}

void log_set_libbpf_quiet(bool quiet)
{
	log_libbpf_quiet = quiet;
}

void log_capture_libbpf(void)
{
	libbpf_set_print(log_libbpf);
}
