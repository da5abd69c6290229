// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The namespaces in use below a sandbox, its responder's sockets in each, runtime_network. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "dns/responder.h"
#include "lib/cgroup.h"
#include "lib/log.h"
#include "sandbox_netns.h"

#define SANDBOX_NETNS_MAX_DEPTH 16
#define SANDBOX_RESOLV_MAX 65536

struct sandbox_netns_scan {
	struct sandbox_netns_seen *seen;
	size_t count, max;
};

static void sandbox_netns_note(struct sandbox_netns_scan *scan, pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	if (stat(path, &st))
		return; /* gone, or a kernel thread */
	for (size_t i = 0; i < scan->count; i++)
		if (scan->seen[i].key == (uint64_t)st.st_ino)
			return;
	if (scan->count < scan->max)
		scan->seen[scan->count++] = (struct sandbox_netns_seen){(uint64_t)st.st_ino, pid};
}

/* A cgroup_walk's fn: scan is its arg. */
static void sandbox_netns_note_pid(pid_t pid, void *scan)
{
	sandbox_netns_note(scan, pid);
}

/* The namespace of pid, if it still is key (the process may have gone or moved). */
static int sandbox_netns_open_pid(pid_t pid, uint64_t key)
{
	char path[64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || (uint64_t)st.st_ino != key) {
		close(fd);
		return -ESRCH;
	}
	return fd;
}

/*
 * The process's /etc/resolv.conf, resolved inside its own root (a symbolic
 * link there cannot point into the daemon's files), a regular file, bounded.
 */
static int sandbox_resolv_read(pid_t pid, struct responder_runtime *runtime)
{
	struct open_how how = {.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	char root[64], *text = NULL;
	int root_fd, fd = -1, err;
	struct stat st;
	ssize_t got;

	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return -errno;
	fd = (int)syscall(SYS_openat2, root_fd, "etc/resolv.conf", &how, sizeof(how));
	err = fd < 0 ? -errno : 0;
	if (!err && (fstat(fd, &st) || !S_ISREG(st.st_mode)))
		err = -EINVAL;
	if (!err && !(text = malloc(SANDBOX_RESOLV_MAX)))
		err = -ENOMEM;
	if (!err) {
		got = read(fd, text, SANDBOX_RESOLV_MAX);
		err = got < 0 ? -errno : responder_resolv_parse(text, (size_t)got, runtime);
	}
	free(text);
	if (fd >= 0)
		close(fd);
	close(root_fd);
	return err;
}

static void sandbox_netns_runtime(struct sandbox *sandbox, const struct sandbox_netns_seen *seen)
{
	struct responder_runtime runtime;
	int fd = sandbox_netns_open_pid(seen->pid, seen->key), err;

	if (fd < 0)
		return;
	err = sandbox_resolv_read(seen->pid, &runtime);
	responder_netns_runtime(sandbox->responder, seen->key, fd, err ? NULL : &runtime);
	close(fd);
}

static void sandbox_netns_listen(struct sandbox *sandbox, const struct sandbox_netns_seen *seen)
{
	int fd = sandbox_netns_open_pid(seen->pid, seen->key), err;

	if (fd < 0)
		return; /* the process went: the next sweep looks again */
	err = responder_netns_listen(sandbox->responder, seen->key, fd);
	close(fd);
	if (!err) {
		log_info("%s: its DNS responder listens in network namespace %" PRIu64
			 " too (that of process %d)",
			 sandbox->path, seen->key, (int)seen->pid);
	} else if (sandbox->netns_warned != seen->key) {
		sandbox->netns_warned = seen->key;
		log_warn("%s: cannot listen on port %u in network namespace %" PRIu64
			 " (process %d): %s; its DNS queries fail there",
			 sandbox->path, sandbox->dns_port, seen->key, (int)seen->pid,
			 strerror(-err));
	}
}

/* Is any process in the cgroup's subtree (cgroup.events "populated 1")? Unreadable: yes. */
static bool sandbox_netns_populated(const char *cgroup)
{
	char path[PATH_MAX], line[64];
	bool populated = true;
	FILE *events;

	snprintf(path, sizeof(path), "%s/cgroup.events", cgroup);
	events = fopen(path, "re");
	while (events && fgets(line, sizeof(line), events))
		if (!strncmp(line, "populated ", 10))
			populated = line[10] != '0';
	if (events)
		fclose(events);
	return populated;
}

size_t sandbox_netns_sweep(struct sandbox_registry *registry, struct sandbox *sandbox,
			   struct sandbox_netns_seen *seen, size_t max)
{
	struct sandbox_netns_seen found[RESPONDER_MAX_NETNS];
	struct sandbox_netns_scan scan = {.seen = found, .max = RESPONDER_MAX_NETNS};
	/* Every process of the subtree, up to the bounds. */
	struct cgroup_walk walk = {.max_depth = SANDBOX_NETNS_MAX_DEPTH,
				   .max_pids = SANDBOX_NETNS_MAX_PIDS,
				   .fn = sandbox_netns_note_pid,
				   .arg = &scan};
	uint64_t primary, key, now = log_monotonic_ms();
	bool runtime, reread = true;

	(void)registry;
	if (!sandbox->responder || !sandbox->path[0])
		return 0;
	primary = responder_netns_key(sandbox->responder);
	/* An empty subtree (most sandboxes between tasks) costs one small read. */
	if (sandbox_netns_populated(sandbox->path))
		cgroup_walk_procs(&walk, sandbox->path);
	runtime = sandbox->policy_known && sandbox->policy.runtime_network;
	/* A resolv.conf is read when its namespace is new, and again every few seconds. */
	if (runtime && now - sandbox->runtime_read_ms >= SANDBOX_RUNTIME_REREAD_MS)
		sandbox->runtime_read_ms = now;
	else if (runtime)
		reread = false;
	for (size_t i = 0; i < scan.count; i++) {
		if (found[i].key != primary &&
		    !responder_netns_listening(sandbox->responder, found[i].key))
			sandbox_netns_listen(sandbox, &found[i]);
		if (runtime &&
		    (reread || !responder_netns_has_runtime(sandbox->responder, found[i].key)))
			sandbox_netns_runtime(sandbox, &found[i]);
	}
	/* Namespaces no process of the subtree uses any more (a walk cut short forgets none). */
	for (size_t index = 0; walk.seen < SANDBOX_NETNS_MAX_PIDS &&
			       responder_netns_at(sandbox->responder, index, &key);) {
		bool used = false;

		for (size_t i = 0; i < scan.count && !used; i++)
			used = found[i].key == key;
		if (used) {
			index++;
			continue;
		}
		responder_netns_forget(sandbox->responder, key);
		log_info("%s: no process in network namespace %" PRIu64
			 " any more; its DNS sockets there are closed",
			 sandbox->path, key);
	}
	for (size_t i = 0; seen && i < scan.count && i < max; i++)
		seen[i] = found[i];
	return scan.count < max ? scan.count : max;
}

void sandbox_netns_tick(struct sandbox_registry *registry)
{
	uint64_t now = log_monotonic_ms();

	if (now - registry->netns_swept_ms < SANDBOX_NETNS_SWEEP_MS)
		return;
	registry->netns_swept_ms = now;
	for (size_t i = 0; i < registry->count; i++)
		sandbox_netns_sweep(registry, registry->items[i], NULL, 0);
}

int sandbox_netns_wait_ms(const struct sandbox_registry *registry)
{
	uint64_t now = log_monotonic_ms(), due = registry->netns_swept_ms + SANDBOX_NETNS_SWEEP_MS;

	if (!registry->dns || !registry->count)
		return -1;
	return due > now ? (int)(due - now) : 0;
}

int sandbox_runtime_allow(struct sandbox *sandbox, const struct in6_addr *addrs, size_t count)
{
	for (size_t n = 0; n < count; n++) {
		bool known = false;

		for (size_t i = 0; i < sandbox->runtime_count && !known; i++)
			known = !memcmp(&sandbox->runtime[i], &addrs[n], sizeof(addrs[n]));
		if (known)
			continue;
		if (!sandbox->runtime &&
		    !(sandbox->runtime = calloc(SANDBOX_RUNTIME_MAX, sizeof(*sandbox->runtime))))
			return -ENOMEM;
		if (sandbox->runtime_count == SANDBOX_RUNTIME_MAX) { /* the oldest goes */
			memmove(sandbox->runtime, sandbox->runtime + 1,
				(SANDBOX_RUNTIME_MAX - 1) * sizeof(*sandbox->runtime));
			sandbox->runtime_count--;
		}
		sandbox->runtime[sandbox->runtime_count++] = addrs[n];
		sandbox->needs_refresh = true;
	}
	return 0;
}

int sandbox_runtime_add(const struct sandbox *sandbox, const struct policy *policy,
			struct allowset *set)
{
	int err = 0;

	if (!policy->runtime_network || policy->mode != POLICY_MODE_ALLOWLIST)
		return 0;
	for (size_t i = 0; i < sandbox->runtime_count && !err; i++) {
		struct allowset_entry entry = {.prefix_len = 128, .port = 0};

		memcpy(entry.addr, &sandbox->runtime[i], 16);
		err = allowset_add(set, &entry);
	}
	if (!err && sandbox->runtime_count)
		allowset_normalize(set);
	return err;
}

json_t *sandbox_runtime_to_json(const struct sandbox *sandbox)
{
	json_t *array = json_array();
	char text[INET6_ADDRSTRLEN];

	for (size_t i = 0; array && i < sandbox->runtime_count; i++) {
		const struct in6_addr *addr = &sandbox->runtime[i];

		if (IN6_IS_ADDR_V4MAPPED(addr))
			inet_ntop(AF_INET, &addr->s6_addr[12], text, sizeof(text));
		else
			inet_ntop(AF_INET6, addr, text, sizeof(text));
		if (json_array_append_new(array, json_string(text))) {
			json_decref(array);
			return NULL;
		}
	}
	return array;
}

void sandbox_runtime_from_json(struct sandbox *sandbox, const json_t *array)
{
	const json_t *item;
	size_t i;

	json_array_foreach(array, i, item)
	{
		const char *text = json_string_value(item);
		struct in6_addr addr = {0};

		if (!text)
			continue;
		if (inet_pton(AF_INET, text, &addr.s6_addr[12]) == 1)
			addr.s6_addr[10] = addr.s6_addr[11] = 0xff;
		else if (inet_pton(AF_INET6, text, &addr) != 1)
			continue;
		if (sandbox_runtime_allow(sandbox, &addr, 1))
			log_warn("%s: cannot keep the runtime address %s", sandbox->path, text);
	}
}
