// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/nameser.h>
#include <ares.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>

#include "lib/log.h"
#include "resolver.h"

#define RESOLVER_MAX_SOCKETS 64

struct resolver {
	ares_channel channel;
	struct names_table names;
	int epoll_fd;
	bool own_epoll;
	int timer_fd;
	int sockets[RESOLVER_MAX_SOCKETS];
	int socket_count;
	bool changed;
	bool library_initialised;
};

/* What a query's callback needs; the entry is found again by name (it may be gone). */
struct resolver_query {
	struct resolver *resolver;
	int family;
	char name[HOSTNAME_MAX_LENGTH + 1];
};

uint64_t resolver_now(void)
{
	return (uint64_t)time(NULL);
}

bool resolver_policy_entry_is_name(const struct policy_entry *entry)
{
	return entry->kind == POLICY_ENTRY_HOSTNAME;
}

static void resolver_socket_state(void *data, ares_socket_t fd, int readable, int writable)
{
	struct resolver *resolver = data;
	struct epoll_event event = {.data.fd = fd};
	int index = -1;

	for (int i = 0; i < resolver->socket_count; i++)
		if (resolver->sockets[i] == fd)
			index = i;
	if (!readable && !writable) {
		if (index < 0)
			return;
		epoll_ctl(resolver->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
		resolver->sockets[index] = resolver->sockets[--resolver->socket_count];
		return;
	}
	event.events = (readable ? EPOLLIN : 0) | (writable ? EPOLLOUT : 0);
	if (index >= 0) {
		epoll_ctl(resolver->epoll_fd, EPOLL_CTL_MOD, fd, &event);
		return;
	}
	if (resolver->socket_count == RESOLVER_MAX_SOCKETS) {
		log_error("resolver: too many upstream sockets");
		return;
	}
	resolver->sockets[resolver->socket_count++] = fd;
	epoll_ctl(resolver->epoll_fd, EPOLL_CTL_ADD, fd, &event);
}

/* The timer fires at the earlier of c-ares' next timeout and the name table's deadline. */
static void resolver_arm(struct resolver *resolver)
{
	struct timeval maximum = {3600, 0}, buffer, *wait;
	struct itimerspec spec = {0};
	uint64_t deadline = names_next_deadline(&resolver->names), now = resolver_now();

	wait = ares_timeout(resolver->channel, &maximum, &buffer);
	if (deadline != UINT64_MAX) {
		uint64_t seconds = deadline > now ? deadline - now : 0;

		if ((uint64_t)wait->tv_sec > seconds ||
		    ((uint64_t)wait->tv_sec == seconds && wait->tv_usec > 0)) {
			buffer.tv_sec = (time_t)seconds;
			buffer.tv_usec = 0;
			wait = &buffer;
		}
	}
	spec.it_value.tv_sec = wait->tv_sec;
	spec.it_value.tv_nsec = (long)wait->tv_usec * 1000;
	if (!spec.it_value.tv_sec && !spec.it_value.tv_nsec)
		spec.it_value.tv_nsec = 1000000; /* zero would disarm it */
	timerfd_settime(resolver->timer_fd, 0, &spec, NULL);
}

static void resolver_answer(struct resolver *resolver, struct names_entry *entry, int family,
			    const unsigned char *answer, int length)
{
	struct in6_addr addrs[NAMES_MAX_ADDRESSES + 1];
	uint32_t ttls[NAMES_MAX_ADDRESSES + 1];
	int count = NAMES_MAX_ADDRESSES + 1, status;

	if (family == AF_INET) {
		struct ares_addrttl v4[NAMES_MAX_ADDRESSES + 1];

		status = ares_parse_a_reply(answer, length, NULL, v4, &count);
		for (int i = 0; status == ARES_SUCCESS && i < count; i++) {
			memset(&addrs[i], 0, sizeof(addrs[i]));
			addrs[i].s6_addr[10] = 0xff;
			addrs[i].s6_addr[11] = 0xff;
			memcpy(&addrs[i].s6_addr[12], &v4[i].ipaddr, 4);
			ttls[i] = v4[i].ttl > 0 ? (uint32_t)v4[i].ttl : 0;
		}
	} else {
		struct ares_addr6ttl v6[NAMES_MAX_ADDRESSES + 1];

		status = ares_parse_aaaa_reply(answer, length, NULL, v6, &count);
		for (int i = 0; status == ARES_SUCCESS && i < count; i++) {
			memcpy(&addrs[i], &v6[i].ip6addr, 16);
			ttls[i] = v6[i].ttl > 0 ? (uint32_t)v6[i].ttl : 0;
		}
	}
	if (status == ARES_ENODATA) {
		count = 0; /* the name exists but has no address of this family */
	} else if (status != ARES_SUCCESS) {
		names_round_failure(entry, status, ares_strerror(status), resolver_now());
		return;
	}
	/* More than the cap: names_round_answer sets truncated for the excess. */
	if (names_round_answer(&resolver->names.config, entry, family, addrs, ttls, (size_t)count,
			       resolver_now()))
		resolver->changed = true;
}

static void resolver_callback(void *arg, int status, int timeouts, unsigned char *answer,
			      int length)
{
	struct resolver_query *query = arg;
	struct resolver *resolver = query->resolver;
	struct names_entry *entry;

	(void)timeouts;
	if (status == ARES_EDESTRUCTION) {
		free(query); /* the channel is going away with the resolver */
		return;
	}
	entry = names_find(&resolver->names, query->name);
	if (entry) {
		if (status == ARES_SUCCESS)
			resolver_answer(resolver, entry, query->family, answer, length);
		else if (status == ARES_ENODATA)
			names_round_answer(&resolver->names.config, entry, query->family, NULL,
					   NULL, 0, resolver_now());
		else
			names_round_failure(entry, status,
					    status == ARES_ENOTFOUND ? "NXDOMAIN"
								     : ares_strerror(status),
					    resolver_now());
		names_round_query_done(&resolver->names.config, entry, resolver_now());
		if (!entry->in_flight && entry->last_error)
			log_debug("resolving %s: %s", entry->name, entry->last_error_text);
	}
	free(query);
}

static void resolver_start(struct resolver *resolver, struct names_entry *entry)
{
	const int families[2] = {AF_INET, AF_INET6};

	names_round_begin(entry, resolver_now());
	for (int i = 0; i < 2; i++) {
		struct resolver_query *query = calloc(1, sizeof(*query));

		if (!query) {
			names_round_failure(entry, -ENOMEM, "out of memory", resolver_now());
			names_round_query_done(&resolver->names.config, entry, resolver_now());
			continue;
		}
		query->resolver = resolver;
		query->family = families[i];
		snprintf(query->name, sizeof(query->name), "%s", entry->name);
		ares_query(resolver->channel, entry->name, ns_c_in,
			   families[i] == AF_INET ? ns_t_a : ns_t_aaaa, resolver_callback, query);
	}
}

/* Names resolving at once: a policy of 1,000 names must not burst 2,000 queries upstream. */
static size_t resolver_rounds_in_flight(const struct resolver *resolver)
{
	size_t rounds = 0;

	for (size_t i = 0; i < resolver->names.count; i++)
		rounds += resolver->names.entries[i]->in_flight > 0;
	return rounds;
}

void resolver_tick(struct resolver *resolver)
{
	uint64_t now = resolver_now();
	size_t rounds;

	ares_process_fd(resolver->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	rounds = resolver_rounds_in_flight(resolver);
	for (size_t i = 0; i < resolver->names.count && rounds < RESOLVER_MAX_ROUNDS; i++) {
		if (!names_due(resolver->names.entries[i], now))
			continue;
		resolver_start(resolver, resolver->names.entries[i]);
		rounds++;
	}
	if (names_expire(&resolver->names, now))
		resolver->changed = true;
	resolver_arm(resolver);
}

bool resolver_handle_fd(struct resolver *resolver, int fd, uint32_t events)
{
	uint64_t expirations;

	if (fd == resolver->timer_fd) {
		if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
			log_debug("resolver timer: %s", strerror(errno));
		resolver_tick(resolver);
		return true;
	}
	for (int i = 0; i < resolver->socket_count; i++) {
		if (resolver->sockets[i] != fd)
			continue;
		ares_process_fd(resolver->channel,
				(events & (EPOLLIN | EPOLLERR | EPOLLHUP)) ? fd : ARES_SOCKET_BAD,
				(events & EPOLLOUT) ? fd : ARES_SOCKET_BAD);
		resolver_tick(resolver); /* answers free room for names still waiting */
		return true;
	}
	return false;
}

int resolver_timer_fd(const struct resolver *resolver)
{
	return resolver->timer_fd;
}

struct names_table *resolver_names(struct resolver *resolver)
{
	return &resolver->names;
}

bool resolver_take_changes(struct resolver *resolver)
{
	bool changed = resolver->changed;

	resolver->changed = false;
	return changed;
}

static int resolver_set_servers(struct resolver *resolver, const struct resolver_options *options)
{
	char csv[RESOLVER_MAX_SERVERS * 64] = "";
	size_t used = 0;
	int status;

	if (!options->server_count)
		return 0; /* c-ares read /etc/resolv.conf */
	for (int i = 0; i < options->server_count; i++)
		used += snprintf(csv + used, sizeof(csv) - used, "%s%s", i ? "," : "",
				 options->servers[i]);
	status = ares_set_servers_ports_csv(resolver->channel, csv);
	if (status != ARES_SUCCESS) {
		log_error("--dns-server %s: %s", csv, ares_strerror(status));
		return -EINVAL;
	}
	return 0;
}

int resolver_open(const struct resolver_options *options, int epoll_fd, struct resolver **out)
{
	struct resolver *resolver = calloc(1, sizeof(*resolver));
	struct ares_options ares = {0};
	int status, err;

	if (!resolver)
		return -ENOMEM;
	resolver->timer_fd = -1;
	resolver->epoll_fd = epoll_fd;
	err = names_table_init(&resolver->names, &options->names);
	if (err)
		goto cleanup;
	status = ares_library_init(ARES_LIB_INIT_ALL);
	if (status != ARES_SUCCESS) {
		err = -ENOMEM;
		goto cleanup;
	}
	resolver->library_initialised = true;
	if (epoll_fd < 0) {
		resolver->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
		resolver->own_epoll = true;
	}
	resolver->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (resolver->epoll_fd < 0 || resolver->timer_fd < 0) {
		err = -errno;
		goto cleanup;
	}
	ares.sock_state_cb = resolver_socket_state;
	ares.sock_state_cb_data = resolver;
	ares.timeout = options->query_timeout_ms > 0 ? options->query_timeout_ms : 2000;
	ares.tries = 2;
	status = ares_init_options(&resolver->channel, &ares,
				   ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES);
	if (status != ARES_SUCCESS) {
		log_error("resolver: %s", ares_strerror(status));
		err = -EINVAL;
		goto cleanup;
	}
	err = resolver_set_servers(resolver, options);
	if (err)
		goto cleanup;
	if (resolver->own_epoll) {
		struct epoll_event event = {.events = EPOLLIN, .data.fd = resolver->timer_fd};

		epoll_ctl(resolver->epoll_fd, EPOLL_CTL_ADD, resolver->timer_fd, &event);
	}
	*out = resolver;
	return 0;
cleanup:
	resolver_close(resolver);
	return err;
}

void resolver_close(struct resolver *resolver)
{
	if (!resolver)
		return;
	if (resolver->channel)
		ares_destroy(resolver->channel);
	if (resolver->timer_fd >= 0)
		close(resolver->timer_fd);
	if (resolver->own_epoll && resolver->epoll_fd >= 0)
		close(resolver->epoll_fd);
	names_table_free(&resolver->names);
	if (resolver->library_initialised)
		ares_library_cleanup();
	free(resolver);
}

/* Calls fn on every name of the policy that resolution covers. */
static int resolver_policy_names(const struct policy *policy,
				 int (*fn)(struct resolver *, const char *),
				 struct resolver *resolver)
{
	for (int list = 0; list < POLICY_LIST_COUNT; list++) {
		size_t count;
		const struct policy_entry *entries = policy_in_force(policy, list, &count);

		for (size_t i = 0; i < count; i++) {
			int err;

			if (!resolver_policy_entry_is_name(&entries[i]))
				continue;
			err = fn(resolver, entries[i].name);
			if (err)
				return err;
		}
	}
	return 0;
}

static int resolver_ref_one(struct resolver *resolver, const char *name)
{
	struct names_entry *entry;

	return names_ref(&resolver->names, name, &entry);
}

static int resolver_unref_one(struct resolver *resolver, const char *name)
{
	names_unref(&resolver->names, name);
	return 0;
}

static int resolver_settled_one(struct resolver *resolver, const char *name)
{
	struct names_entry *entry = names_find(&resolver->names, name);

	return entry && entry->resolved_once ? 0 : -EAGAIN;
}

int resolver_policy_ref(struct resolver *resolver, const struct policy *policy)
{
	int err = resolver_policy_names(policy, resolver_ref_one, resolver);

	if (err)
		resolver_policy_unref(resolver, policy);
	else
		resolver_tick(resolver);
	return err;
}

void resolver_policy_unref(struct resolver *resolver, const struct policy *policy)
{
	resolver_policy_names(policy, resolver_unref_one, resolver);
}

bool resolver_policy_settled(struct resolver *resolver, const struct policy *policy)
{
	return resolver_policy_names(policy, resolver_settled_one, resolver) == 0;
}

static bool resolver_entry_unanswered(const struct names_entry *entry)
{
	if (!entry || !entry->resolved_once)
		return true;
	return !entry->count && entry->last_error && entry->last_error != ARES_ENOTFOUND;
}

const char *resolver_policy_unanswered(struct resolver *resolver, const struct policy *policy,
				       const char **why)
{
	for (int list = 0; list < POLICY_LIST_COUNT; list++) {
		size_t count;
		const struct policy_entry *entries = policy_in_force(policy, list, &count);

		for (size_t i = 0; i < count; i++) {
			const struct names_entry *entry;

			if (!resolver_policy_entry_is_name(&entries[i]))
				continue;
			entry = names_find(&resolver->names, entries[i].name);
			if (!resolver_entry_unanswered(entry))
				continue;
			*why = entry && entry->resolved_once && entry->last_error_text[0]
				       ? entry->last_error_text
				       : "no answer in time";
			return entries[i].name;
		}
	}
	return NULL;
}

int resolver_wait_settled(struct resolver *resolver, const struct policy *policy, int timeout_ms)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!resolver_policy_settled(resolver, policy)) {
		struct epoll_event events[16];
		int elapsed, count;

		clock_gettime(CLOCK_MONOTONIC, &now);
		elapsed = (int)((now.tv_sec - start.tv_sec) * 1000 +
				(now.tv_nsec - start.tv_nsec) / 1000000);
		if (elapsed >= timeout_ms)
			return -ETIMEDOUT;
		count = epoll_wait(resolver->epoll_fd, events, 16, timeout_ms - elapsed);
		for (int i = 0; i < count; i++)
			resolver_handle_fd(resolver, events[i].data.fd, events[i].events);
	}
	return 0;
}
