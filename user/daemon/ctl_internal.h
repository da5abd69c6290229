/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Shared by ctl.c (parse, dispatch, replies) and ctl_change.c (attach, detach, holders). */
#ifndef BFBPF_CTL_INTERNAL_H
#define BFBPF_CTL_INTERNAL_H

#include <stdbool.h>
#include <jansson.h>

#include "ctl.h"

/* {"ok": true, ...fields}; takes fields. */
json_t *ctl_reply_ok(json_t *fields);

/*
 * A socket that no address hook judges outlives a relock: in a restrictive
 * mode its holders are killed (kill) or named in an error; NULL: go on.
 */
json_t *ctl_holders_settle(struct sandbox *sandbox, const struct policy *policy, bool kill,
			   bool applied, int *killed);
/* Attach, with a container's record and the target refusals; NULL: *out is the sandbox. */
json_t *ctl_attach(struct sandbox_registry *registry, struct ctl_request *request,
		   struct sandbox **out, bool *recorded);
/* Detach, and forget its container's record. */
json_t *ctl_detach(struct sandbox_registry *registry, struct ctl_request *request,
		   struct sandbox *sandbox);

#endif /* BFBPF_CTL_INTERNAL_H */
