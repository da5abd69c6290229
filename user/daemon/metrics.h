/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `bfbpf metrics` and --metrics-listen: every counter in the Prometheus text
 * exposition format, read from the registry (sandboxes, their periodic
 * checks), the loader's per-CPU counters and each sandbox's DNS responder.
 */
#ifndef BFBPF_METRICS_H
#define BFBPF_METRICS_H

struct sandbox_registry;

/* The whole exposition text (caller frees), or NULL without memory. */
char *metrics_text(struct sandbox_registry *registry);

#endif /* BFBPF_METRICS_H */
