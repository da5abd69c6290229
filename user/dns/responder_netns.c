// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A responder's sockets in the network namespaces beyond its first: a parent
 * cgroup's containers each have their own, and the BPF programs send their
 * port-53 queries to 127.0.0.1 (or [::1]) inside it. The owner tells which
 * namespaces are in use (sandbox_netns.c); a namespace without sockets yet
 * has nothing listening on the port: its queries fail, closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>

#include "lib/log.h"
#include "responder_internal.h"

uint64_t responder_netns_key(const struct responder *responder)
{
	return responder->netns_key;
}

int responder_in_netns(int netns_fd, int (*fn)(void *arg), void *arg)
{
	int self, err;

	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return -errno;
	if (setns(netns_fd, CLONE_NEWNET)) {
		err = -errno;
		close(self);
		return err;
	}
	err = fn(arg);
	if (setns(self, CLONE_NEWNET))
		log_error("cannot return to the daemon's network namespace: %s", strerror(errno));
	close(self);
	return err;
}

static void responder_listener_close(struct responder *responder,
				     struct responder_listener *listener)
{
	for (int i = 0; i < 2; i++) {
		responder_unwatch_close(responder, &listener->udp[i]);
		responder_unwatch_close(responder, &listener->listen[i]);
	}
}

bool responder_netns_listening(const struct responder *responder, uint64_t key)
{
	if (key == responder->netns_key)
		return true;
	for (size_t i = 0; i < responder->listener_count; i++)
		if (responder->listeners[i].key == key)
			return true;
	return false;
}

bool responder_netns_at(const struct responder *responder, size_t index, uint64_t *key)
{
	if (index >= responder->listener_count)
		return false;
	*key = responder->listeners[index].key;
	return true;
}

int responder_netns_open(const struct responder *responder, size_t index)
{
	int fd;

	if (index >= responder->listener_count)
		return -ENOENT;
	/* The IPv4 UDP socket is always there (a listener without it is not kept). */
	fd = ioctl(responder->listeners[index].udp[RESPONDER_V4], SIOCGSKNS);
	return fd < 0 ? -errno : fd;
}

int responder_netns_listen(struct responder *responder, uint64_t key, int netns_fd)
{
	struct responder_listener listener = {.key = key, .udp = {-1, -1}, .listen = {-1, -1}};
	int err = 0;

	if (responder_netns_listening(responder, key))
		return 0;
	if (responder->listener_count >= RESPONDER_MAX_NETNS - 1)
		return -ENOSPC;
	/* The port of the first namespace: the BPF programs redirect every one to it. */
	for (int family = 0; family < (responder->v6 ? 2 : 1) && !err; family++) {
		int af = family ? AF_INET6 : AF_INET;

		listener.udp[family] = responder_socket(netns_fd, af, SOCK_DGRAM, responder->port);
		if (listener.udp[family] < 0)
			err = listener.udp[family];
		else
			listener.listen[family] =
				responder_socket(netns_fd, af, SOCK_STREAM, responder->port);
		if (!err && listener.listen[family] < 0)
			err = listener.listen[family];
	}
	if (err && listener.udp[RESPONDER_V4] >= 0 && listener.listen[RESPONDER_V4] >= 0) {
		/* No [::1] there: its IPv6 queries find nothing listening (closed). */
		for (int i = RESPONDER_V6; i < 2; i++) {
			if (listener.udp[i] >= 0)
				close(listener.udp[i]);
			if (listener.listen[i] >= 0)
				close(listener.listen[i]);
			listener.udp[i] = listener.listen[i] = -1;
		}
		err = 0;
	}
	if (err) {
		for (int i = 0; i < 2; i++) {
			if (listener.udp[i] >= 0)
				close(listener.udp[i]);
			if (listener.listen[i] >= 0)
				close(listener.listen[i]);
		}
		return err;
	}
	for (int i = 0; i < 2; i++) {
		if (listener.udp[i] >= 0)
			responder_watch(responder, listener.udp[i]);
		if (listener.listen[i] >= 0)
			responder_watch(responder, listener.listen[i]);
	}
	responder->listeners[responder->listener_count++] = listener;
	return 0;
}

static void responder_runtime_drop(struct responder *responder, size_t index)
{
	close(responder->runtimes[index].netns_fd);
	responder->runtimes[index] = responder->runtimes[--responder->runtime_count];
}

void responder_netns_forget(struct responder *responder, uint64_t key)
{
	for (size_t i = 0; i < responder->listener_count; i++) {
		if (responder->listeners[i].key != key)
			continue;
		responder_listener_close(responder, &responder->listeners[i]);
		responder->listeners[i] = responder->listeners[--responder->listener_count];
		break;
	}
	for (size_t i = 0; i < responder->runtime_count; i++) {
		if (responder->runtimes[i].key == key) {
			responder_runtime_drop(responder, i);
			break;
		}
	}
}

int responder_netns_runtime(struct responder *responder, uint64_t key, int netns_fd,
			    const struct responder_runtime *runtime)
{
	struct responder_runtime_entry *entry = NULL;
	int fd;

	for (size_t i = 0; i < responder->runtime_count && !entry; i++)
		if (responder->runtimes[i].key == key)
			entry = &responder->runtimes[i];
	if (!runtime) {
		if (entry)
			responder_runtime_drop(responder, (size_t)(entry - responder->runtimes));
		return 0;
	}
	if (entry) {
		entry->runtime = *runtime;
		return 0;
	}
	if (responder->runtime_count >= RESPONDER_MAX_NETNS)
		return -ENOSPC;
	if (!responder->runtimes) {
		responder->runtimes = calloc(RESPONDER_MAX_NETNS, sizeof(*responder->runtimes));
		if (!responder->runtimes)
			return -ENOMEM;
	}
	fd = fcntl(netns_fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	responder->runtimes[responder->runtime_count++] =
		(struct responder_runtime_entry){.key = key, .netns_fd = fd, .runtime = *runtime};
	return 0;
}

bool responder_netns_has_runtime(const struct responder *responder, uint64_t key)
{
	for (size_t i = 0; i < responder->runtime_count; i++)
		if (responder->runtimes[i].key == key)
			return true;
	return false;
}

void responder_netns_close_all(struct responder *responder)
{
	for (size_t i = 0; i < responder->listener_count; i++)
		responder_listener_close(responder, &responder->listeners[i]);
	responder->listener_count = 0;
	while (responder->runtime_count)
		responder_runtime_drop(responder, 0);
	free(responder->runtimes);
	responder->runtimes = NULL;
}

bool responder_netns_handle_fd(struct responder *responder, int fd)
{
	for (size_t n = 0; n < responder->listener_count; n++) {
		struct responder_listener *listener = &responder->listeners[n];

		for (int i = 0; i < 2; i++) {
			if (fd >= 0 && fd == listener->udp[i]) {
				responder_udp_read(responder, fd, listener->key);
				return true;
			}
			if (fd >= 0 && fd == listener->listen[i]) {
				responder_tcp_accept(responder, fd, listener->key);
				return true;
			}
		}
	}
	return false;
}

void responder_drain(struct responder *responder)
{
	for (int i = 0; i < 2; i++)
		if (responder->udp[i] >= 0)
			responder_udp_read(responder, responder->udp[i], responder->netns_key);
	for (size_t n = 0; n < responder->listener_count; n++)
		for (int i = 0; i < 2; i++)
			if (responder->listeners[n].udp[i] >= 0)
				responder_udp_read(responder, responder->listeners[n].udp[i],
						   responder->listeners[n].key);
}

uint64_t responder_liveness(const struct responder *responder)
{
	return responder->liveness;
}
