/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Sandboxes: the attached cgroups, each with its policy, its generation in
 * the maps and its links; attach, update and detach with their ordering
 * rules, and re-adoption of what a previous daemon left pinned.
 */
#ifndef BFBPF_SANDBOX_H
#define BFBPF_SANDBOX_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <jansson.h>

#include "lib/allowset.h"
#include "lib/container.h"
#include "loader/loader.h"
#include "lib/policy.h"

/* A name the sandbox resolved through the responder (its addresses are allowed). */
struct sandbox_learned {
	char name[HOSTNAME_MAX_LENGTH + 1];
	time_t last_used;
};

struct responder;
struct responder_context;
struct events;

struct sandbox_garbage {
	uint32_t generation;
	struct allowset entries;
};

struct sandbox {
	uint64_t cgroup_id;
	char *path;	      /* never NULL; "" when adopted without a known path */
	bool policy_known;    /* false: adopted without a readable state file */
	struct policy policy; /* the only copy: status and the state file format it again */
	uint64_t digest;
	uint32_t generation;
	struct allowset applied; /* the entries of generation in the maps */
	/* sniset_digest of generation's SNI keys, for refresh (0 when adopted: written again) */
	uint64_t sni_digest;
	int link_fds[LOADER_HOOK_COUNT];
	time_t since;
	char *netns_path;   /* NULL when not given: the daemon's namespace */
	int netns_fd;	    /* held open: a /proc/PID/ns/net path dies with PID */
	bool netns_unknown; /* adopted without state, and no process has told it yet */
	char *last_verify;  /* the last full verification (with probes) as text, or NULL */
	time_t last_verify_at;
	bool last_check_ok; /* the periodic attachment and map checks */
	time_t last_check_at;
	struct responder *responder; /* NULL: no DNS responder (bfbpf run) */
	uint16_t dns_port;	     /* the responder's port, as in the map value */
	bool dns_v6;		     /* it listens on [::1] too */
	bool events;		     /* its denials produce events */
	size_t learned_count;
	struct sandbox_learned *learned; /* RESPONDER_MAX_LEARNED at most */
	bool state_dirty;		 /* the state file lags: write it after the reply */
	uint64_t state_due_ms;		 /* when its last state write was due (CLOCK_MONOTONIC) */
	bool needs_refresh;		 /* a name was learned: its addresses need programming */
	bool names_settled;		 /* every name of the policy answered once (cached) */
	/* The container it confines ("" none): its record keeps the policy across restarts. */
	char container_id[CONTAINER_ID_LENGTH + 1];
	bool guard;		  /* a guard (guard.h): its policy is its subtree's default */
	uint64_t netns_warned;	  /* the namespace last warned about (sandbox_netns.c): once */
	size_t runtime_count;	  /* runtime_network addresses allowed (sandbox_netns.c) */
	uint64_t runtime_read_ms; /* when its namespaces' resolv.conf were last read */
	struct in6_addr *runtime; /* SANDBOX_RUNTIME_MAX at most, oldest first */
	uint16_t guard_level;	  /* a guard's cgroup level (the cgroup2 root is 0) */
};

struct resolver;
struct background;
struct cgroup_parents;
struct containers;

struct sandbox_registry {
	struct loader *loader;
	struct resolver *resolver;     /* NULL: names contribute nothing */
	struct responder_context *dns; /* NULL: sandboxes get no DNS responder */
	struct events *events;	       /* NULL: no event consumer */
	bool events_enabled;	       /* denials produce ring buffer events */
	/*
	 * The daemon's: verify judges AF_VSOCK (bfbpf run leaves it off: its
	 * command's seccomp filter refuses the family where BPF LSM is missing).
	 */
	bool judges_vsock;
	bool accept_vsock;     /* --accept-vsock: the operator accepts a live vsock transport */
	const char *state_dir; /* NULL: no state files (bfbpf run) */
	size_t count;
	struct sandbox **items;
	/* Entries of generations no sandbox uses any more, deleted after the reply. */
	size_t garbage_count;
	struct sandbox_garbage *garbage;
	/* Runs what comes after a reply; NULL: the loop runs it (bfbpf run). Stopped by free. */
	struct background *background;
	/* Containers whose policy follows them across restarts (containers.h); NULL: none. */
	struct containers *containers;
	const char *policy_dir;	 /* policies by name (NAME.json); NULL: none */
	uint64_t cgroups_gone;	 /* sandboxes forgotten because their cgroup was removed */
	uint64_t reapplied;	 /* containers' policies re-applied (re-created cgroup, pod key) */
	uint64_t netns_swept_ms; /* the last sweep of the namespaces in use (sandbox_netns.c) */
	/* Cgroup parents, to place a socket's cgroup below a sandbox (sandbox_sweep.c). */
	struct cgroup_parents *cgroup_parents;
};

/* Error reported to a client: a code from the control-socket contract and a message. */
struct sandbox_error {
	const char *code;
	char message[512];
};

int sandbox_registry_init(struct sandbox_registry *registry, struct loader *loader,
			  const char *state_dir);
/*
 * Give every sandbox attached or adopted from now on a DNS responder of this
 * context (its epoll, rate and resolver set by the caller); the registry fills
 * in the operations the responders call back.
 */
void sandbox_registry_set_dns(struct sandbox_registry *registry, struct responder_context *dns);
/* Re-adopt every sandbox found in the pinned maps (after a restart). */
int sandbox_registry_adopt(struct sandbox_registry *registry);
/*
 * Sandboxes adopted without a state file and no process then: the first
 * process that appears tells the netns, and the DNS responder starts there.
 */
void sandbox_registry_recover(struct sandbox_registry *registry);
/* Forget sandboxes whose cgroup was removed; returns how many. */
int sandbox_registry_reap(struct sandbox_registry *registry);
void sandbox_registry_free(struct sandbox_registry *registry);

struct sandbox *sandbox_find(struct sandbox_registry *registry, uint64_t cgroup_id);
/*
 * A request named the sandbox by this path (resolved, its id the sandbox's):
 * a sandbox adopted without a known path takes it (and writes it to its state).
 */
void sandbox_adopt_path(struct sandbox *sandbox, const char *path);

/*
 * netns may be NULL (the sandbox shares the daemon's network namespace).
 * Both take the policy: on success it is the sandbox's and *policy is left
 * empty (no copy is made); on failure it stays the caller's.
 */
int sandbox_attach(struct sandbox_registry *registry, const char *path, const char *netns,
		   struct policy *policy, struct sandbox **out, struct sandbox_error *error);
/* The same for a guard (guard is true): guard.h's guard_set is the caller. */
int sandbox_attach_role(struct sandbox_registry *registry, const char *path, const char *netns,
			struct policy *policy, bool guard, struct sandbox **out,
			struct sandbox_error *error);
int sandbox_update(struct sandbox_registry *registry, struct sandbox *sandbox,
		   struct policy *policy, struct sandbox_error *error);
int sandbox_detach(struct sandbox_registry *registry, struct sandbox *sandbox,
		   struct sandbox_error *error);

/*
 * Delete the entries of generations that were replaced, and write the state
 * files that lag: handed to the background worker, if there is one. An
 * update is in force from its flip: the old entries are only garbage, and
 * the state file only matters to a restarted daemon (which, finding it
 * stale, keeps enforcing the maps and says the policy is unknown).
 */
void sandbox_registry_collect(struct sandbox_registry *registry);
/* Wait for the background work (before reading the maps whole: verify). */
void sandbox_registry_quiesce(struct sandbox_registry *registry);
/* Re-program a sandbox whose names' addresses changed (no-op if nothing did). */
int sandbox_refresh(struct sandbox_registry *registry, struct sandbox *sandbox);
/* Has every name of the sandbox's policy answered at least once? */
bool sandbox_names_settled(struct sandbox_registry *registry, struct sandbox *sandbox);
/*
 * Literal entries plus the current addresses of the policy's names and of the
 * names learned through DNS (range-filtered unless a literal covers them).
 */
int sandbox_allowset_compute(const struct sandbox_registry *registry, const struct policy *policy,
			     const struct sandbox_learned *learned, size_t learned_count,
			     struct allowset *out);
/* Persist a sandbox's path, netns, policy and learned names (atomic rename). */
int sandbox_state_write(const struct sandbox_registry *registry, struct sandbox *sandbox);
/* What the maps of a sandbox must hold now (the policy, its names, its learned names). */
/* The SNI keys of a policy's names (none when the rule is off): sniset.h. */
int sandbox_sniset_compute(const struct sandbox_registry *registry, const struct policy *policy,
			   const struct sandbox_learned *learned, size_t learned_count,
			   struct sniset *out);
/* sniset_digest of the SNI keys the sandbox's maps must hold now (its policy, learned names). */
int sandbox_sni_digest(const struct sandbox_registry *registry, const struct sandbox *sandbox,
		       uint64_t *out);
/*
 * Destroy the sandbox's refused and long-undecided flows (sock_diag SOCK_DESTROY, in its
 * own namespace and each other one its processes use); relock: also its established flows its
 * policy no longer allows (sandbox_sweep.c).
 */
int sandbox_sweep(struct sandbox_registry *registry, const struct sandbox *sandbox, bool relock);
/* The same for every sandbox with the rule on (the daemon's sweep timer). */
void sandbox_registry_sweep(struct sandbox_registry *registry);
int sandbox_expected_allowset(struct sandbox_registry *registry, struct sandbox *sandbox,
			      struct allowset *out);
/* Remember a name learned through DNS (LRU beyond the cap); true if it is new. */
int sandbox_learn(struct sandbox_registry *registry, struct sandbox *sandbox, const char *name,
		  bool *added);
/* Forget learned names the sandbox's (new) policy does not allow. */
void sandbox_learned_prune(struct sandbox_registry *registry, struct sandbox *sandbox);
/* The map value a sandbox's state calls for (generation, flags, digest, DNS port). */
void sandbox_value(const struct sandbox *sandbox, const struct policy *policy, uint32_t generation,
		   uint64_t digest, struct bfbpf_sandbox *value);
/* Per name of the policy: addresses, filtered addresses, errors, times. */
json_t *sandbox_names_to_json(struct sandbox_registry *registry, const struct sandbox *sandbox);
/* The names of the policy with no address programmed. */
json_t *sandbox_names_unresolved(struct sandbox_registry *registry, const struct sandbox *sandbox);

/*
 * The loop's side of names (sandbox_serve.c), for the daemon and bfbpf run:
 * is fd a responder's (then it handled the event)? After each wake-up,
 * re-program what changed names moved, then send the waiting replies. How
 * long the loop may sleep for the responders (-1: until an event).
 */
bool sandbox_registry_dns_handle(struct sandbox_registry *registry, int fd, uint32_t events);
void sandbox_registry_names_serve(struct sandbox_registry *registry);
int sandbox_registry_dns_wait_ms(const struct sandbox_registry *registry);

uint32_t sandbox_flags(const struct policy *policy);
void sandbox_digest_format(uint64_t digest, char out[17]);
json_t *sandbox_to_json(struct sandbox_registry *registry, const struct sandbox *sandbox);

#endif /* BFBPF_SANDBOX_H */
