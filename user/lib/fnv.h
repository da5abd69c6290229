/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * FNV-1a 64, the hash of userspace's digests (a policy's, an SNI set's): one
 * copy for every digest. The kernel's name hash (bpf/lib/hello.h) is the same
 * function, written for the verifier.
 */
#ifndef BFBPF_LIB_FNV_H
#define BFBPF_LIB_FNV_H

#include <stddef.h>
#include <stdint.h>

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

/* The hash h continued over size bytes of data. */
static inline uint64_t fnv_update(uint64_t h, const void *data, size_t size)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < size; i++) {
		h ^= p[i];
		h *= FNV_PRIME;
	}
	return h;
}

#endif /* BFBPF_LIB_FNV_H */
