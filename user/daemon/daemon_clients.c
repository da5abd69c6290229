// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The daemon's control connections: accept, read lines, serve them, send replies. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "daemon_internal.h"
#include "lib/cgroup.h"
#include "lib/log.h"
#include "sandbox/events.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5; older headers lack it */
#endif

/* Deeper than any real cgroup tree (the kernel's default limit is unlimited, but paths are not). */
#define DAEMON_PEER_MAX_DEPTH 256

void daemon_client_reset(struct daemon_client *client)
{
	memset(client, 0, sizeof(*client));
	client->fd = -1;
	client->peer.pidfd = -1;
}

void daemon_client_close(struct daemon *daemon, struct daemon_client *client)
{
	events_unfollow(daemon->events, client->fd);
	ctl_pending_clear(&client->pending);
	epoll_ctl(daemon->epoll_fd, EPOLL_CTL_DEL, client->fd, NULL);
	close(client->fd);
	if (client->peer.pidfd >= 0)
		close(client->peer.pidfd);
	free(client->buffer);
	daemon_client_reset(client);
}

struct daemon_client *daemon_client_of(struct daemon *daemon, int fd)
{
	for (int i = 0; i < DAEMON_MAX_CLIENTS; i++)
		if (daemon->clients[i].fd == fd)
			return &daemon->clients[i];
	return NULL;
}

/*
 * Replies go out at once; a peer that stops reading (no progress for a
 * second while its receive buffer is full) loses the rest and is dropped by
 * the caller. A large reply to a reader that keeps reading goes out whole.
 */
int daemon_client_send(struct daemon_client *client, json_t *reply)
{
	char *text = json_dumps(reply, JSON_COMPACT);
	size_t length, sent = 0;
	uint64_t started_ms = log_monotonic_ms();
	int waited_ms = 0;

	json_decref(reply);
	if (!text)
		return -ENOMEM;
	length = strlen(text);
	text[length++] = '\n'; /* replaces the terminator; length counts it */
	while (sent < length) {
		ssize_t n = send(client->fd, text + sent, length - sent, MSG_NOSIGNAL);

		if (n > 0) {
			sent += (size_t)n;
			waited_ms = 0;
			continue;
		}
		/* And a trickling reader gets 5 s in all: the daemon has others to serve. */
		if (n < 0 && errno == EAGAIN && waited_ms < 1000 &&
		    log_monotonic_ms() - started_ms < 5000) {
			struct pollfd poller = {.fd = client->fd, .events = POLLOUT};

			/* Counted only when the peer made no room at all. */
			if (poll(&poller, 1, 100) == 0)
				waited_ms += 100;
			continue;
		}
		break;
	}
	free(text);
	return sent == length ? 0 : -EPIPE;
}

/* When the process started (clock ticks since boot, field 22 of /proc/PID/stat). */
static int daemon_pid_start_time(pid_t pid, unsigned long long *out)
{
	char path[64], text[1024], *end;
	ssize_t length;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	length = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (length <= 0)
		return -ESRCH;
	text[length] = '\0';
	/* The command name may hold blanks and parentheses: the fields follow the last ')'. */
	end = strrchr(text, ')');
	if (!end || sscanf(end + 1,
			   " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			   "%*d %*d %llu",
			   out) != 1)
		return -EIO;
	return 0;
}

/* Is the process that connected still the one behind peer->pid? */
static bool daemon_peer_alive(const struct daemon_peer *peer)
{
	unsigned long long start_time;

	if (peer->pidfd >= 0)
		return pidfd_send_signal(peer->pidfd, 0, NULL, 0) == 0;
	return daemon_pid_start_time(peer->pid, &start_time) == 0 && start_time == peer->start_time;
}

/* Does the cgroup directory list the process (it has not moved since we read its path)? */
static bool daemon_cgroup_lists(int dir_fd, pid_t pid)
{
	int fd = openat(dir_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	bool found = false;
	FILE *procs;
	int listed;

	if (fd < 0)
		return false;
	procs = fdopen(fd, "re");
	if (!procs) {
		close(fd);
		return false;
	}
	while (!found && fscanf(procs, "%d", &listed) == 1)
		found = listed == (int)pid;
	fclose(procs);
	return found;
}

/*
 * The peer's cgroup v2 directory: its "0::" line of /proc/PID/cgroup, which
 * is relative to the reader's (the daemon's) cgroup namespace, under the
 * daemon's cgroup2 mount. -EXDEV if it lies outside that namespace ("/..").
 */
static int daemon_peer_cgroup(const struct daemon *daemon, pid_t pid, char *out, size_t size)
{
	char file[64], *line = NULL, *dots;
	size_t capacity = 0;
	FILE *cgroups;
	int err = -ENOENT;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	cgroups = fopen(file, "re");
	if (!cgroups)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &capacity, cgroups) > 0) {
		const char *relative = line + 3;

		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		dots = strstr(relative, "/..");
		if (dots && (dots[3] == '/' || dots[3] == '\0'))
			err = -EXDEV;
		else if ((size_t)snprintf(out, size, "%s%s", daemon->cgroup_mount,
					  strcmp(relative, "/") ? relative : "") >= size)
			err = -ENAMETOOLONG;
		else
			err = 0;
		break;
	}
	free(line);
	fclose(cgroups);
	return err;
}

/*
 * Which sandbox the peer's cgroup lies in, the cgroup itself or an ancestor:
 * 1 (named in which), 0 (none), or a negative errno when it cannot be told,
 * which refuses the peer (fail closed).
 *
 * The path is read as the daemon's cgroup namespace sees it, so a peer that
 * made its own cgroup namespace cannot shorten it. The directory it names
 * must list the peer in its cgroup.procs: that proves it is the peer's cgroup
 * (a peer that moved meanwhile is refused). cgroup v2 cannot rename a cgroup,
 * and a populated cgroup and its ancestors cannot be removed, so walking up
 * with ".." from that directory visits the peer's ancestors; each is compared
 * by id (its inode) with the registry. This costs two small files, the
 * cgroup.procs of one cgroup and a stat per level, whatever the number of
 * sandboxes; reading every sandbox's cgroup.procs (and its descendants')
 * would cost that per sandbox.
 */
static int daemon_peer_sandbox(struct daemon *daemon, const struct daemon_peer *peer, char *which,
			       size_t size)
{
	char path[PATH_MAX];
	struct stat root, level;
	int fd, parent, err;

	if (!daemon->registry.count)
		return 0; /* no sandbox to be in */
	if (!daemon->cgroup_mount[0] &&
	    cgroup_mount_find(daemon->cgroup_mount, sizeof(daemon->cgroup_mount)))
		daemon->cgroup_mount[0] = '\0';
	if (!daemon->cgroup_mount[0] || stat(daemon->cgroup_mount, &root))
		return -ENOENT;
	err = daemon_peer_cgroup(daemon, peer->pid, path, sizeof(path));
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = -ESRCH;
	if (!daemon_cgroup_lists(fd, peer->pid))
		goto cleanup;
	for (int depth = 0; depth < DAEMON_PEER_MAX_DEPTH; depth++) {
		struct sandbox *sandbox;

		if (fstat(fd, &level)) {
			err = -errno;
			goto cleanup;
		}
		sandbox = sandbox_find(&daemon->registry, (uint64_t)level.st_ino);
		if (sandbox) {
			snprintf(which, size, "%s", sandbox->path[0] ? sandbox->path : path);
			err = 1;
			goto cleanup;
		}
		err = 0;
		if (level.st_dev == root.st_dev && level.st_ino == root.st_ino)
			goto cleanup;
		parent = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (parent < 0) {
			err = -errno;
			goto cleanup;
		}
		close(fd);
		fd = parent;
	}
	err = -ELOOP;
cleanup:
	close(fd);
	return err;
}

/*
 * May this peer use the daemon? Root, or the socket group; and never a
 * process of a sandbox (a root process with no capabilities in its sandbox
 * would otherwise unlock itself). 0, or -EPERM with the reason.
 */
static int daemon_peer_check(struct daemon *daemon, const struct daemon_peer *peer, char *reason,
			     size_t size)
{
	char which[PATH_MAX];
	int inside = daemon_peer_sandbox(daemon, peer, which, sizeof(which));

	/* Read after the cgroup: a pid reused meanwhile is caught here. */
	if (!daemon_peer_alive(peer))
		inside = -ESRCH;
	if (inside == 0)
		return 0;
	if (inside > 0)
		snprintf(reason, size,
			 "process %d is inside sandbox %s: a sandboxed process may not use bfbpf",
			 (int)peer->pid, which);
	else if (inside == -ESRCH)
		snprintf(reason, size,
			 "process %d, which connected, has exited or moved: connect again",
			 (int)peer->pid);
	else
		snprintf(reason, size, "cannot tell whether process %d is in a sandbox: %s",
			 (int)peer->pid,
			 inside == -EXDEV ? "its cgroup is outside the daemon's"
					  : strerror(-inside));
	return -EPERM;
}

/* Who connected (SO_PEERCRED, SO_PEERPIDFD), and whether they may: 0 or -EPERM with the reason. */
static int daemon_peer_admit(struct daemon *daemon, int fd, struct daemon_peer *peer, char *reason,
			     size_t size)
{
	struct ucred cred;
	socklen_t length = sizeof(cred);
	const struct daemon_options *options = daemon->options;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length)) {
		snprintf(reason, size, "cannot tell who connected: %s", strerror(errno));
		return -EPERM;
	}
	if (cred.uid != 0 &&
	    (options->socket_group == (gid_t)-1 || cred.gid != options->socket_group)) {
		snprintf(reason, size,
			 "only root or the socket group may use bfbpf (uid %u gid %u)", cred.uid,
			 cred.gid);
		return -EPERM;
	}
	if (cred.pid <= 0) {
		snprintf(reason, size, "the peer's process is not in the daemon's pid namespace");
		return -EPERM;
	}
	peer->pid = cred.pid;
	length = sizeof(peer->pidfd);
	/* A pidfd pins the process: its pid cannot be reused while we look at it. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &peer->pidfd, &length))
		peer->pidfd = -1;
	if (peer->pidfd < 0 && daemon_pid_start_time(peer->pid, &peer->start_time)) {
		snprintf(reason, size, "process %d, which connected, has exited", (int)peer->pid);
		return -EPERM;
	}
	return daemon_peer_check(daemon, peer, reason, size);
}

static void daemon_refuse(int fd, const char *code, const char *message)
{
	struct daemon_client refused = {.fd = fd};

	daemon_client_send(&refused, ctl_reply_error(code, message));
}

void daemon_accept(struct daemon *daemon)
{
	struct daemon_peer peer = {.pidfd = -1};
	struct daemon_client *slot;
	char reason[PATH_MAX + 160];
	int fd = accept4(daemon->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	slot = daemon_client_of(daemon, -1);
	if (!slot) {
		daemon_refuse(fd, "busy", "too many clients; retry");
		close(fd);
		return;
	}
	if (daemon_peer_admit(daemon, fd, &peer, reason, sizeof(reason))) {
		log_warn("refused a client: %s", reason);
		daemon_refuse(fd, "forbidden", reason);
		if (peer.pidfd >= 0)
			close(peer.pidfd);
		close(fd);
		return;
	}
	slot->fd = fd;
	slot->peer = peer;
	slot->last_activity = time(NULL);
	if (daemon_epoll_add(daemon, fd))
		daemon_client_close(daemon, slot);
}

void daemon_client_serve_lines(struct daemon *daemon, struct daemon_client *client)
{
	char *newline;

	while (!client->pending.active && !client->following && client->buffer &&
	       (newline = memchr(client->buffer, '\n', client->length))) {
		size_t line_length = (size_t)(newline - client->buffer);
		char reason[PATH_MAX + 160];
		json_t *reply;

		/* Again at each request: its process may have joined a sandbox since. */
		if (daemon_peer_check(daemon, &client->peer, reason, sizeof(reason))) {
			log_warn("refused a request: %s", reason);
			daemon_client_send(client, ctl_reply_error("forbidden", reason));
			daemon_client_close(daemon, client);
			return;
		}
		reply = ctl_handle_line(&daemon->registry, client->buffer, line_length,
					&client->pending);

		client->length -= line_length + 1;
		memmove(client->buffer, newline + 1, client->length);
		if (!reply && client->pending.active)
			continue; /* waits for names: daemon_after_events sends it */
		if (daemon_client_send(client, reply)) {
			daemon_client_close(daemon, client);
			return;
		}
		if (client->pending.follow) {
			client->pending.follow = false;
			if (events_follow(daemon->events, client->fd,
					  client->pending.follow_cgroup_id)) {
				daemon_client_send(client,
						   ctl_reply_error("busy", "too many followers"));
				daemon_client_close(daemon, client);
				return;
			}
			client->following = true;
		}
	}
}

void daemon_client_read(struct daemon *daemon, struct daemon_client *client)
{
	char chunk[65536];
	ssize_t n = recv(client->fd, chunk, sizeof(chunk), 0);

	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		daemon_client_close(daemon, client);
		return;
	}
	client->last_activity = time(NULL);
	if (client->length + (size_t)n > CTL_MAX_REQUEST_BYTES + 1) {
		daemon_client_send(client, ctl_reply_error("too_large", CTL_TOO_LARGE_MESSAGE));
		daemon_client_close(daemon, client);
		return;
	}
	/* Grown as lines arrive: most requests are small, a 100,000-entry policy is not. */
	if (client->length + (size_t)n > client->capacity) {
		size_t capacity = client->capacity ? client->capacity : 65536;
		char *grown;

		while (capacity < client->length + (size_t)n)
			capacity *= 2;
		grown = realloc(client->buffer, capacity);
		if (!grown) {
			daemon_client_close(daemon, client);
			return;
		}
		client->buffer = grown;
		client->capacity = capacity;
	}
	memcpy(client->buffer + client->length, chunk, (size_t)n);
	client->length += (size_t)n;
	daemon_client_serve_lines(daemon, client);
}
