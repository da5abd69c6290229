/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the shared parsers (hello.h, tls_sni.h, http_host.h) take from the
 * BPF headers, for their userspace build (cmocka tests, libFuzzer, the
 * kernel-agreement runner): the UAPI integer types, __always_inline, and
 * bpf_loop() as a plain loop with the kernel's contract (the callback says 0
 * to go on, 1 to stop; the result is the number of calls).
 */
#ifndef BFBPF_LIB_USERSPACE_H
#define BFBPF_LIB_USERSPACE_H

#ifdef __bpf__
#error "userspace.h is the userspace build's shim; BPF code uses bpf_helpers.h"
#endif

#include <linux/types.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

static inline long bfbpf_loop_user(__u32 nr_loops, int (*callback)(__u32, void *), void *ctx)
{
	__u32 i;

	for (i = 0; i < nr_loops; i++)
		if (callback(i, ctx))
			return (long)i + 1;
	return (long)nr_loops;
}

#endif /* BFBPF_LIB_USERSPACE_H */
