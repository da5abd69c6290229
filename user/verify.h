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

/* {"lockdown_complete": bool, "checks": [{"name", "ok", "detail"}...]} */
json_t *verify_sandbox(struct sandbox_registry *registry, const struct sandbox *sandbox);

#endif /* BFBPF_VERIFY_H */
