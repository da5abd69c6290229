/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Host names: RFC 1123 validation, normalisation, and the allow rules of docs/design.md. */
#ifndef BFBPF_HOSTMATCH_H
#define BFBPF_HOSTMATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

/*
 * Normalise a host name: lower case, one trailing dot dropped, every label
 * RFC 1123 (letters, digits, inner hyphens, 1-63 characters), 253 in all.
 * Returns 0, or -EINVAL with a reason in err.
 */
int hostname_normalize(const char *name, char *out, size_t out_size, char *err, size_t err_size);

/* Does a HOSTNAME or WILDCARD entry allow this (already normalised) name? */
bool hostmatch_entry(const struct policy_entry *entry, const char *name);

/* Does any name entry of the policy's allowed_hosts allow this name? Any case,
 * trailing dot ignored; an invalid name is never allowed. */
bool hostmatch_policy(const struct policy *policy, const char *name);

#endif /* BFBPF_HOSTMATCH_H */
