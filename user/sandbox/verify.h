/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Verification: does the kernel enforce what a sandbox's policy asks? Each
 * check is found from the kernel (the cgroup's attached programs, the maps),
 * never from the daemon's memory alone.
 */
#ifndef BFBPF_VERIFY_H
#define BFBPF_VERIFY_H

#include <jansson.h>

#include "sandbox.h"

/*
 * {"lockdown_complete": bool, "checks": [{"name", "ok", "detail"}...]}.
 * with_probes adds the live probes; snapshot may be NULL (one is taken).
 */
json_t *verify_sandbox(struct sandbox_registry *registry, struct sandbox *sandbox, bool with_probes,
		       const struct loader_snapshot *snapshot);
/* A live vsock transport on this host (described in out): true. */
bool verify_vsock_transport(char *out, size_t size);
/* The attachment and map checks of every sandbox (no probes), for the timer. */
int verify_registry_periodic(struct sandbox_registry *registry);
/*
 * The "dns" check (allowlist policies with a responder): a query from a
 * process in cgroup, in each network namespace the sandbox uses, answered by
 * its responder (verify_dns.c).
 */
void verify_dns(struct sandbox_registry *registry, struct sandbox *sandbox, const char *cgroup,
		json_t *checks, bool *complete);

#endif /* BFBPF_VERIFY_H */
