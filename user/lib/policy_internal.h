/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What policy.c, policy_entries.c and policy_sni.c share; not for other modules. */
#ifndef BFBPF_POLICY_INTERNAL_H
#define BFBPF_POLICY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

/* In policy order (kind, name, address, prefix length, port) and unique? */
bool policy_entries_sorted(const struct policy_entry *v, size_t n);
/* Sorts into policy order and drops entries equal after normalisation; returns the new count. */
size_t policy_entries_dedup(struct policy_entry *v, size_t n);
/* The entries and their names in one new allocation, names after the entries. */
struct policy_entry *policy_entries_pack(const struct policy_entry *v, size_t n);

/* A one-line error: control characters (from a quoted value) become '?'. */
void policy_errf(char *err, size_t err_size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* BFBPF_POLICY_INTERNAL_H */
