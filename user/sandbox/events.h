/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Events: the kernel's denials (ring buffer) and the responder's refusals,
 * annotated with the sandbox and the names the sandbox learned the address
 * from, kept in a bounded history and streamed to `bfbpf log --follow`
 * clients. The per-sandbox counters of status are read here too; the
 * Prometheus text of `bfbpf metrics` is the daemon's (daemon/metrics.c).
 */
#ifndef BFBPF_EVENTS_H
#define BFBPF_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

struct sandbox;
struct sandbox_registry;
struct loader;

/* Documented limit: events kept for `bfbpf log` (the oldest go first). */
#define EVENTS_HISTORY 10000
#define EVENTS_MAX_FOLLOWERS 32

struct events;

int events_open(struct loader *loader, struct sandbox_registry *registry, int epoll_fd,
		struct events **out);
void events_close(struct events *events);
/* Does this fd belong to the event machinery? Then it handles the event. */
bool events_handle_fd(struct events *events, int fd, uint32_t events_mask);

/* A DNS query the responder refused (an event like the kernel's). */
void events_record_dns_refusal(struct events *events, const struct sandbox *sandbox,
			       const char *name, unsigned int qtype);

/*
 * A sandbox's life, for `bfbpf log` and metrics: "cgroup_gone" (its cgroup was
 * removed; the sandbox is forgotten), "reapplied" (a container's recorded
 * policy was attached to its re-created cgroup, or to its pod's restarted
 * container). container_id may be "" or NULL.
 */
void events_record_lifecycle(struct events *events, const char *what, const struct sandbox *sandbox,
			     const char *container_id);

/* Events of the history (of one cgroup id, 0: all) not older than since_seconds (<0: all). */
json_t *events_history(struct events *events, uint64_t cgroup_id, double since_seconds);
/* Streams every later event (of cgroup_id, 0: all) to fd, one JSON line each, until it closes. */
int events_follow(struct events *events, int fd, uint64_t cgroup_id);
/* Forget a follower whose connection the daemon closes. */
void events_unfollow(struct events *events, int fd);

/* The summed per-CPU counters of a sandbox, for status. */
json_t *events_counters(struct events *events, const struct sandbox *sandbox);
/* The name of a hook of the counters and events (BFBPF_HOOK_*), as status and metrics show it. */
const char *events_hook_name(unsigned int hook);
/* A judged flow's refusal reason (enum bfbpf_reason): its name, NULL for none. */
const char *events_reason_name(unsigned int reason);

/* One human line for an event object (`bfbpf log` without --json). */
void events_format_line(json_t *event, char *out, size_t size);

#endif /* BFBPF_EVENTS_H */
