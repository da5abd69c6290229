/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The daemon: owns the pinned BPF objects and serves the control socket. */
#ifndef BFBPF_DAEMON_H
#define BFBPF_DAEMON_H

#include <stdbool.h>
#include <sys/types.h>

#include "dns/resolver.h"

#define DAEMON_DEFAULT_SOCKET "/run/bfbpf/bfbpf.sock"
#define DAEMON_DEFAULT_BPFFS "/sys/fs/bpf/bfbpf"
#define DAEMON_DEFAULT_POLICY_DIR "/etc/bfbpf/policies"

struct daemon_options {
	const char *socket_path;
	const char *bpffs_dir;
	const char *state_dir; /* default: "state" beside the socket */
	gid_t socket_group;    /* (gid_t)-1: root only */
	int client_timeout_seconds;
	int verify_interval_seconds; /* periodic attachment and map checks */
	struct resolver_options resolver;
	bool events;		    /* denials produce events (default true) */
	const char *metrics_listen; /* ADDR:PORT for Prometheus scrapes, or NULL */
	unsigned int dns_rate;	    /* DNS queries per second per sandbox */
	bool accept_vsock;	    /* verify passes a live vsock transport (with a warning) */
	const char *policy_dir;	    /* NAME.json: the policies attach may name */
};

/* Runs until SIGINT or SIGTERM; sandboxes stay enforced after it returns. */
int daemon_run(const struct daemon_options *options);

/* Make sure the bpffs that holds dir is mounted (mounts /sys/fs/bpf if needed). */
int daemon_bpffs_ensure(const char *dir);

#endif /* BFBPF_DAEMON_H */
