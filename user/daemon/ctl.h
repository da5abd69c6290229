/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Control socket protocol: one JSON object per line in, one per line out
 * (docs/design.md "Control socket"). Parsing is separate from execution so that
 * the parser, which reads untrusted input, is unit-tested and fuzzed alone.
 */
#ifndef BFBPF_CTL_H
#define BFBPF_CTL_H

#include <stddef.h>
#include <jansson.h>

#include "sandbox/containers.h"
#include "sandbox/sandbox.h"

/*
 * Longest request line accepted (room for a policy of POLICY_MAX_JSON_BYTES);
 * a longer one is refused with "too_large".
 */
#define CTL_MAX_REQUEST_BYTES ((16 << 20) + 65536)
#define CTL_TOO_LARGE_MESSAGE "request larger than 16 MiB (the policy file limit) plus 64 KiB"

enum ctl_op {
	CTL_OP_ATTACH,
	CTL_OP_UPDATE,
	CTL_OP_DETACH,
	CTL_OP_STATUS,
	CTL_OP_VERIFY,
	CTL_OP_LOG,
	CTL_OP_METRICS,
	CTL_OP_GUARD,	/* set a guard, or replace its policy */
	CTL_OP_UNGUARD, /* remove a guard */
};

struct ctl_request {
	enum ctl_op op;
	const char *cgroup;   /* NULL when absent (status) */
	const char *netns;    /* attach: the sandbox's network namespace, or NULL */
	json_int_t max_age;   /* verify: a cached result this fresh will do; -1: none */
	double since;	      /* log: events at most this many seconds old; -1: all */
	bool follow;	      /* log: keep streaming events after the reply */
	bool kill_holders;    /* attach, update: kill what holds a socket the mode refuses */
	struct policy policy; /* attach, update and guard */
	bool has_policy;
	const char *policy_name; /* attach: a policy of the daemon's --policy-dir, by name */
	/* attach, update, detach, verify: the container the cgroup belongs to */
	struct container_ref container;
	bool has_container;
	json_t *root; /* owns the strings above */
};

/*
 * Parse one request line (without its newline). Returns 0, or a negative
 * errno with error->code ("bad_json", "bad_request", "unknown_op",
 * "invalid_policy", "too_large") and a message.
 */
int ctl_request_parse(const char *line, size_t length, struct ctl_request *request,
		      struct sandbox_error *error);
void ctl_request_free(struct ctl_request *request);

json_t *ctl_reply_error(const char *code, const char *message);

/*
 * An attach or update whose names have not all answered yet: its reply waits
 * (bounded by RESOLVER_SETTLE_TIMEOUT_MS) so that it can say which did not.
 */
struct ctl_pending {
	bool active;
	uint64_t cgroup_id;
	json_t *reply;
	uint64_t deadline_ms; /* CLOCK_MONOTONIC */
	/* log --follow: after its reply the connection streams events (of follow_cgroup_id). */
	bool follow;
	uint64_t follow_cgroup_id;
};

/*
 * Execute one request line against the registry; returns the reply object,
 * or NULL with *pending active when the reply must wait for names.
 */
json_t *ctl_handle_line(struct sandbox_registry *registry, const char *line, size_t length,
			struct ctl_pending *pending);
/* The waiting reply once its names answered (or time ran out); NULL while it waits. */
json_t *ctl_pending_poll(struct sandbox_registry *registry, struct ctl_pending *pending);
void ctl_pending_clear(struct ctl_pending *pending);

#endif /* BFBPF_CTL_H */
