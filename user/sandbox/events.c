// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <bpf/libbpf.h>

#include "events.h"
#include "loader/loader.h"
#include "lib/log.h"
#include "dns/resolver.h"
#include "sandbox.h"

static const char *const events_hook_names[BFBPF_HOOK_COUNT] = {
	[BFBPF_HOOK_CONNECT4] = "connect4",	  [BFBPF_HOOK_CONNECT6] = "connect6",
	[BFBPF_HOOK_SENDMSG4] = "sendmsg4",	  [BFBPF_HOOK_SENDMSG6] = "sendmsg6",
	[BFBPF_HOOK_SOCK_CREATE] = "sock_create", [BFBPF_HOOK_EGRESS] = "egress",
	[BFBPF_HOOK_SOCKET_LSM] = "socket_lsm",	  [BFBPF_HOOK_SETSOCKOPT] = "setsockopt",
};

/* enum bfbpf_reason, as events and counters name them (docs/policy.md). */
static const char *const events_reason_names[BFBPF_REASON_COUNT] = {
	[BFBPF_REASON_NONE] = "",
	[BFBPF_REASON_SNI_NOT_ALLOWED] = "sni_not_allowed",
	[BFBPF_REASON_NO_SNI] = "no_sni",
	[BFBPF_REASON_SNI_ADDRESS_MISMATCH] = "sni_address_mismatch",
	[BFBPF_REASON_HOST_NOT_ALLOWED] = "host_not_allowed",
	[BFBPF_REASON_QUIC_REFUSED] = "quic_refused",
};

const char *events_reason_name(unsigned int reason)
{
	return reason && reason < BFBPF_REASON_COUNT ? events_reason_names[reason] : NULL;
}

/* A judged flow's refusal: why, and the name it carried (checked: a DNS name). */
static void events_add_reason(json_t *event, const struct bfbpf_event *raw)
{
	char name[sizeof(raw->name) + 1];
	size_t n = raw->name_len < sizeof(raw->name) ? raw->name_len : 0;

	if (!events_reason_name(raw->reason))
		return;
	json_object_set_new(event, "reason", json_string(events_reason_name(raw->reason)));
	memcpy(name, raw->name, n);
	name[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '-' || name[i] == '_' || name[i] == '.'))
			name[i] = '?';
	json_object_set_new(event, "sni", n ? json_string(name) : json_null());
}

const char *events_hook_name(unsigned int hook)
{
	return hook < BFBPF_HOOK_COUNT ? events_hook_names[hook] : "unknown";
}

struct events_follower {
	int fd; /* -1: free */
	uint64_t cgroup_id;
};

/*
 * An event of the history, as its JSON line: a tenth of the memory of the
 * object (a full history is 10,000 events), parsed again only for `log`.
 */
struct events_entry {
	char *line;
	double when;
	uint64_t cgroup_id;
};

struct events {
	struct loader *loader;
	struct sandbox_registry *registry;
	struct ring_buffer *ring;
	int ring_fd;
	struct events_entry history[EVENTS_HISTORY]; /* a ring: the oldest is overwritten */
	size_t history_next, history_count;
	struct events_follower followers[EVENTS_MAX_FOLLOWERS];
	uint64_t dns_refusals;
};

static double events_now(void)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return (double)now.tv_sec + now.tv_nsec / 1e9;
}

/* The kernel stamps CLOCK_MONOTONIC; people and logs want wall time. */
static double events_wall_of(uint64_t monotonic_ns)
{
	struct timespec mono;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	return events_now() - ((double)mono.tv_sec + mono.tv_nsec / 1e9) +
	       (double)monotonic_ns / 1e9;
}

static void events_format_time(double when, char *out, size_t size)
{
	time_t seconds = (time_t)when;
	struct tm tm;

	gmtime_r(&seconds, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + strlen(out), size - strlen(out), ".%03dZ",
		 (int)((when - (double)seconds) * 1000));
}

static struct sandbox *events_sandbox(struct events *events, uint64_t cgroup_id)
{
	return sandbox_find(events->registry, cgroup_id);
}

/* The names (of this sandbox's policy or learned through its DNS) that hold the address. */
static json_t *events_names_of(struct events *events, const struct sandbox *sandbox,
			       const struct in6_addr *addr)
{
	json_t *names = json_array();
	struct names_table *table;

	if (!sandbox || !events->registry->resolver)
		return names;
	table = resolver_names(events->registry->resolver);
	for (size_t i = 0; i < table->count; i++) {
		const struct names_entry *entry = table->entries[i];
		bool mine = false;

		for (size_t j = 0; j < sandbox->learned_count && !mine; j++)
			mine = !strcmp(sandbox->learned[j].name, entry->name);
		for (size_t j = 0;
		     sandbox->policy_known && j < sandbox->policy.n_allowed_hosts && !mine; j++)
			mine = !strcmp(sandbox->policy.allowed_hosts[j].name, entry->name);
		for (size_t j = 0;
		     sandbox->policy_known && j < sandbox->policy.n_model_endpoints && !mine; j++)
			mine = !strcmp(sandbox->policy.model_endpoints[j].name, entry->name);
		for (size_t j = 0; mine && j < entry->count; j++) {
			if (!memcmp(&entry->addresses[j].addr, addr, sizeof(*addr))) {
				json_array_append_new(names, json_string(entry->name));
				break;
			}
		}
	}
	return names;
}

static const char *events_protocol_name(unsigned int protocol)
{
	switch (protocol) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "icmpv6";
	case IPPROTO_RAW:
		return "raw";
	case 0:
		return "ip";
	default:
		return "other";
	}
}

/* Records an event (taking it): into the history, and out to every matching follower. */
static void events_record(struct events *events, json_t *event, uint64_t cgroup_id, double when)
{
	char *line = json_dumps(event, JSON_COMPACT);
	struct events_entry *slot = &events->history[events->history_next];

	json_decref(event);
	if (!line)
		return;
	if (events->history_count == EVENTS_HISTORY)
		free(slot->line);
	else
		events->history_count++;
	slot->line = line;
	slot->when = when;
	slot->cgroup_id = cgroup_id;
	events->history_next = (events->history_next + 1) % EVENTS_HISTORY;
	for (int i = 0; i < EVENTS_MAX_FOLLOWERS; i++) {
		struct events_follower *follower = &events->followers[i];
		size_t length = strlen(line);

		if (follower->fd < 0 || (follower->cgroup_id && follower->cgroup_id != cgroup_id))
			continue;
		line[length] = '\n';
		/* A follower that cannot keep up loses lines, never the daemon's time. */
		if (send(follower->fd, line, length + 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 &&
		    errno != EAGAIN)
			follower->fd = -1;
		line[length] = '\0';
	}
}

static int events_on_ring(void *context, void *data, size_t size)
{
	struct events *events = context;
	const struct bfbpf_event *raw = data;
	struct sandbox *sandbox;
	struct in6_addr addr;
	char address[INET6_ADDRSTRLEN] = "", comm[sizeof(raw->comm) + 1];
	double when;
	json_t *event;

	if (size < sizeof(*raw) || raw->hook >= BFBPF_HOOK_COUNT)
		return 0;
	sandbox = events_sandbox(events, raw->cgroup_id);
	memcpy(&addr, raw->addr, sizeof(addr));
	memcpy(comm, raw->comm, sizeof(raw->comm));
	comm[sizeof(raw->comm)] = '\0';
	if (IN6_IS_ADDR_V4MAPPED(&addr))
		inet_ntop(AF_INET, &addr.s6_addr[12], address, sizeof(address));
	else
		inet_ntop(AF_INET6, &addr, address, sizeof(address));
	when = events_wall_of(raw->time_ns);
	event = json_pack("{s:f, s:s, s:s, s:I, s:s, s:i, s:i, s:s, s:s}", "time", when, "verdict",
			  "deny", "cgroup", sandbox ? sandbox->path : "", "cgroup_id",
			  (json_int_t)raw->cgroup_id, "hook", events_hook_names[raw->hook], "pid",
			  (int)raw->pid, "tgid", (int)raw->tgid, "comm", comm, "protocol",
			  events_protocol_name(raw->protocol));
	if (!event)
		return 0;
	/* A guard's denial: the process's cgroup below it has no registration. */
	if (raw->flags & BFBPF_EVENT_UNREGISTERED)
		json_object_set_new(event, "unregistered", json_true());
	if (raw->hook == BFBPF_HOOK_SOCK_CREATE || raw->hook == BFBPF_HOOK_SOCKET_LSM) {
		json_object_set_new(event, "family", json_integer(raw->family));
		json_object_set_new(event, "type", json_integer(raw->type));
	} else {
		json_object_set_new(event, "address", json_string(address));
		json_object_set_new(event, "port", json_integer(raw->port));
		json_object_set_new(event, "names", events_names_of(events, sandbox, &addr));
		events_add_reason(event, raw);
	}
	events_record(events, event, raw->cgroup_id, when);
	return 0;
}

void events_record_dns_refusal(struct events *events, const struct sandbox *sandbox,
			       const char *name, unsigned int qtype)
{
	double when = events_now();
	json_t *event;

	if (!events)
		return;
	events->dns_refusals++;
	event = json_pack("{s:f, s:s, s:s, s:I, s:s, s:s, s:i}", "time", when, "verdict", "refuse",
			  "cgroup", sandbox->path, "cgroup_id", (json_int_t)sandbox->cgroup_id,
			  "hook", "dns", "name", name, "qtype", (int)qtype);
	if (event)
		events_record(events, event, sandbox->cgroup_id, when);
}

void events_record_lifecycle(struct events *events, const char *what, const struct sandbox *sandbox,
			     const char *container_id)
{
	double when = events_now();
	json_t *event;

	if (!events)
		return;
	event = json_pack("{s:f, s:s, s:s, s:I, s:s}", "time", when, "verdict", what, "cgroup",
			  sandbox->path, "cgroup_id", (json_int_t)sandbox->cgroup_id, "hook",
			  "lifecycle");
	if (event && container_id && container_id[0])
		json_object_set_new(event, "container", json_string(container_id));
	if (event)
		events_record(events, event, sandbox->cgroup_id, when);
}

int events_open(struct loader *loader, struct sandbox_registry *registry, int epoll_fd,
		struct events **out)
{
	struct events *events = calloc(1, sizeof(*events));
	struct epoll_event watch = {.events = EPOLLIN};

	if (!events)
		return -ENOMEM;
	events->loader = loader;
	events->registry = registry;
	for (int i = 0; i < EVENTS_MAX_FOLLOWERS; i++)
		events->followers[i].fd = -1;
	events->ring = ring_buffer__new(loader_events_fd(loader), events_on_ring, events, NULL);
	if (!events->ring) {
		int err = -errno;

		free(events);
		return err;
	}
	events->ring_fd = ring_buffer__epoll_fd(events->ring);
	watch.data.fd = events->ring_fd;
	if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, events->ring_fd, &watch)) {
		int err = -errno;

		events_close(events);
		return err;
	}
	*out = events;
	return 0;
}

void events_close(struct events *events)
{
	if (!events)
		return;
	ring_buffer__free(events->ring);
	for (size_t i = 0; i < EVENTS_HISTORY; i++)
		free(events->history[i].line);
	free(events);
}

bool events_handle_fd(struct events *events, int fd, uint32_t events_mask)
{
	(void)events_mask;
	if (!events || fd != events->ring_fd)
		return false;
	ring_buffer__consume(events->ring);
	return true;
}

json_t *events_history(struct events *events, uint64_t cgroup_id, double since_seconds)
{
	size_t start =
		(events->history_next + EVENTS_HISTORY - events->history_count) % EVENTS_HISTORY;
	double cutoff = since_seconds >= 0 ? events_now() - since_seconds : 0;
	json_t *list = json_array();

	for (size_t n = 0; n < events->history_count; n++) {
		const struct events_entry *entry = &events->history[(start + n) % EVENTS_HISTORY];

		if (entry->when < cutoff || (cgroup_id && cgroup_id != entry->cgroup_id))
			continue;
		json_array_append_new(list, json_loads(entry->line, 0, NULL));
	}
	return list;
}

int events_follow(struct events *events, int fd, uint64_t cgroup_id)
{
	for (int i = 0; i < EVENTS_MAX_FOLLOWERS; i++) {
		if (events->followers[i].fd >= 0)
			continue;
		events->followers[i].fd = fd;
		events->followers[i].cgroup_id = cgroup_id;
		return 0;
	}
	return -EBUSY;
}

void events_unfollow(struct events *events, int fd)
{
	for (int i = 0; events && i < EVENTS_MAX_FOLLOWERS; i++)
		if (events->followers[i].fd == fd)
			events->followers[i].fd = -1;
}

json_t *events_counters(struct events *events, const struct sandbox *sandbox)
{
	struct bfbpf_stats sum;
	json_t *hooks = json_object(), *sni;

	if (loader_stats_read(events->loader, sandbox->cgroup_id, &sum)) {
		json_decref(hooks);
		return json_null();
	}
	for (int hook = 0; hook < BFBPF_HOOK_COUNT; hook++)
		json_object_set_new(hooks, events_hook_names[hook],
				    json_pack("{s:I, s:I}", "allowed",
					      (json_int_t)sum.allowed[hook], "denied",
					      (json_int_t)sum.denied[hook]));
	sni = json_pack("{s:I}", "allowed", (json_int_t)sum.sni_allowed);
	for (int reason = 1; sni && reason < BFBPF_REASON_COUNT; reason++)
		json_object_set_new(sni, events_reason_names[reason],
				    json_integer((json_int_t)sum.sni_refused[reason]));
	return json_pack("{s:o, s:{s:I, s:I, s:I}, s:o}", "hooks", hooks, "events", "sent",
			 (json_int_t)sum.events_sent, "limited", (json_int_t)sum.events_limited,
			 "lost", (json_int_t)sum.events_lost, "sni", sni ? sni : json_null());
}

static void events_format_socket(long long family, long long type, char *out, size_t size)
{
	static const char *const types[] = {"?", "stream", "dgram", "raw", "rdm", "seqpacket"};
	const char *name = family == AF_INET	? "inet"
			   : family == AF_INET6 ? "inet6"
			   : family == 17	? "packet"
			   : family == 40	? "vsock"
			   : family == 44	? "xdp"
						: NULL;

	if (name)
		snprintf(out, size, "socket(%s, %s)", name,
			 type >= 0 && type <= 5 ? types[type] : "?");
	else
		snprintf(out, size, "socket(family %lld, type %lld)", family, type);
}

void events_format_line(json_t *event, char *out, size_t size)
{
	json_t *names = json_object_get(event, "names");
	char when[40], target[INET6_ADDRSTRLEN + 16] = "", annotation[512] = "";
	const char *address = json_string_value(json_object_get(event, "address"));
	const char *hook = json_string_value(json_object_get(event, "hook"));
	json_t *name;
	size_t i, used = 0;

	events_format_time(json_real_value(json_object_get(event, "time")), when, sizeof(when));
	if (hook && !strcmp(hook, "lifecycle")) {
		const char *container = json_string_value(json_object_get(event, "container"));

		snprintf(out, size, "%s %s %s (cgroup id %lld)%s%s", when,
			 !strcmp(json_string_value(json_object_get(event, "verdict")), "reapplied")
				 ? "REAPPLIED"
				 : "CGROUP-GONE",
			 json_string_value(json_object_get(event, "cgroup")),
			 json_integer_value(json_object_get(event, "cgroup_id")),
			 container ? " container " : "", container ? container : "");
		return;
	}
	if (hook && !strcmp(hook, "dns")) {
		snprintf(out, size, "%s REFUSE dns %s (type %lld) %s", when,
			 json_string_value(json_object_get(event, "name")),
			 json_integer_value(json_object_get(event, "qtype")),
			 json_string_value(json_object_get(event, "cgroup")));
		return;
	}
	if (address)
		snprintf(target, sizeof(target), strchr(address, ':') ? "[%s]:%lld" : "%s:%lld",
			 address, json_integer_value(json_object_get(event, "port")));
	else
		events_format_socket(json_integer_value(json_object_get(event, "family")),
				     json_integer_value(json_object_get(event, "type")), target,
				     sizeof(target));
	json_array_foreach(names, i, name) used +=
		snprintf(annotation + used, sizeof(annotation) - used, "%s%s", used ? ", " : " (",
			 json_string_value(name));
	if (used && used < sizeof(annotation) - 1)
		strcat(annotation, ")");
	if (json_string_value(json_object_get(event, "reason")))
		used += snprintf(annotation + used, sizeof(annotation) - used, " %s%s%s",
				 json_string_value(json_object_get(event, "reason")),
				 json_string_value(json_object_get(event, "sni")) ? " sni=" : "",
				 json_string_value(json_object_get(event, "sni"))
					 ? json_string_value(json_object_get(event, "sni"))
					 : "");
	snprintf(out, size, "%s DENY %s %s%s pid %lld %s [%s] %s%s", when,
		 json_string_value(json_object_get(event, "protocol")), target, annotation,
		 json_integer_value(json_object_get(event, "tgid")),
		 json_string_value(json_object_get(event, "comm")), hook,
		 json_string_value(json_object_get(event, "cgroup")),
		 json_is_true(json_object_get(event, "unregistered"))
			 ? " (guard: unregistered cgroup)"
			 : "");
}
