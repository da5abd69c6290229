// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <linux/magic.h>

#include "lib/background.h"
#include "ctl.h"
#include "sandbox/events.h"
#include "metrics_http.h"
#include "daemon.h"
#include "daemon_internal.h"
#include "loader/loader.h"
#include "lib/log.h"
#include "dns/resolver.h"
#include "dns/responder.h"
#include "sandbox/containers.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_netns.h"
#include "sandbox/verify.h"

#define DAEMON_MMAP_THRESHOLD (128 << 10) /* glibc's initial value, kept */

int daemon_bpffs_ensure(const char *dir)
{
	char probe[PATH_MAX];
	struct statfs fs;

	snprintf(probe, sizeof(probe), "%s", dir);
	/* The nearest existing ancestor tells which filesystem the pins will land on. */
	while (statfs(probe, &fs)) {
		char *slash = strrchr(probe, '/');

		if (errno != ENOENT || !slash || slash == probe)
			return -errno;
		*slash = '\0';
	}
	if (fs.f_type == BPF_FS_MAGIC)
		return 0;
	if (strncmp(dir, "/sys/fs/bpf/", 12) || strcmp(probe, "/sys/fs/bpf")) {
		log_error("%s is not on a bpffs; mount one (mount -t bpf bpf /sys/fs/bpf) or pass "
			  "--bpffs under a bpffs",
			  dir);
		return -ENOTSUP;
	}
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		log_error("mounting bpffs at /sys/fs/bpf: %s", strerror(errno));
		return -errno;
	}
	log_info("mounted bpffs at /sys/fs/bpf");
	return 0;
}

static int daemon_mkdir_parents(const char *path, mode_t mode)
{
	char buffer[PATH_MAX];

	snprintf(buffer, sizeof(buffer), "%s", path);
	for (char *slash = buffer + 1; *slash; slash++) {
		if (*slash != '/')
			continue;
		*slash = '\0';
		if (mkdir(buffer, mode) && errno != EEXIST)
			return -errno;
		*slash = '/';
	}
	return 0;
}

/*
 * The control socket, created 0600 (no window in which others may connect);
 * with a socket group, the group gets read and write before listen(), so
 * that the daemon, not the operator, grants what --socket-group promises.
 */
static int daemon_listen(const char *path, gid_t group)
{
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	mode_t old_mask;
	int fd, err;

	if (strlen(path) >= sizeof(address.sun_path)) {
		log_error("socket path %s is too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(address.sun_path, path);
	err = daemon_mkdir_parents(path, 0755);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A socket file that nobody answers on is a leftover of a crash. */
	if (!connect(fd, (struct sockaddr *)&address, sizeof(address))) {
		log_error("another daemon is serving %s", path);
		close(fd);
		return -EADDRINUSE;
	}
	unlink(path);
	old_mask = umask(0177);
	err = bind(fd, (struct sockaddr *)&address, sizeof(address));
	umask(old_mask);
	if (!err && group != (gid_t)-1)
		err = chown(path, (uid_t)-1, group) || chmod(path, 0660);
	if (err || listen(fd, 64)) {
		err = -errno;
		log_error("listening on %s: %s", path, strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

int daemon_epoll_add(struct daemon *daemon, int fd)
{
	struct epoll_event event = {.events = EPOLLIN, .data.fd = fd};

	return epoll_ctl(daemon->epoll_fd, EPOLL_CTL_ADD, fd, &event) ? -errno : 0;
}

/* Half a second: a refused flow's client errors within about that (sandbox_sweep.c). */
#define DAEMON_SWEEP_MS 500

static void daemon_sweep(struct daemon *daemon)
{
	uint64_t expirations;

	if (read(daemon->sweep_fd, &expirations, sizeof(expirations)) < 0)
		return;
	sandbox_registry_sweep(&daemon->registry);
}

static void daemon_tick(struct daemon *daemon)
{
	uint64_t expirations;
	time_t now = time(NULL);

	if (read(daemon->timer_fd, &expirations, sizeof(expirations)) < 0)
		return;
	sandbox_registry_reap(&daemon->registry);
	sandbox_registry_recover(&daemon->registry);
	containers_tick(&daemon->registry);
	verify_registry_periodic(&daemon->registry);
	/* The map snapshot of the checks is large and brief: give its memory back. */
	malloc_trim(0);
	for (int i = 0; i < DAEMON_MAX_CLIENTS; i++) {
		struct daemon_client *client = &daemon->clients[i];

		if (client->fd >= 0 && !client->following &&
		    now - client->last_activity > daemon->options->client_timeout_seconds)
			daemon_client_close(daemon, client);
	}
}

/* Names answered: re-program the sandboxes they changed, then send waiting replies. */
static void daemon_after_events(struct daemon *daemon)
{
	sandbox_registry_names_serve(&daemon->registry);
	/* Re-created cgroups of recorded containers whose process has shown up. */
	containers_poll(&daemon->registry);
	/* Namespaces that came or went below sandboxes: their DNS sockets follow. */
	sandbox_netns_tick(&daemon->registry);
	/* Replies are out: now the entries of replaced generations go. */
	sandbox_registry_collect(&daemon->registry);
	for (int i = 0; i < DAEMON_MAX_CLIENTS; i++) {
		struct daemon_client *client = &daemon->clients[i];
		json_t *reply;

		if (client->fd < 0 || !client->pending.active)
			continue;
		reply = ctl_pending_poll(&daemon->registry, &client->pending);
		if (!reply)
			continue;
		if (daemon_client_send(client, reply))
			daemon_client_close(daemon, client);
		else
			daemon_client_serve_lines(daemon, client);
	}
}

/* Wake up for the earliest waiting reply's deadline, if any. */
static int daemon_wait_ms(const struct daemon *daemon)
{
	uint64_t now = log_monotonic_ms(), earliest = UINT64_MAX;
	int dns_ms;

	for (int i = 0; i < DAEMON_MAX_CLIENTS; i++)
		if (daemon->clients[i].fd >= 0 && daemon->clients[i].pending.active &&
		    daemon->clients[i].pending.deadline_ms < earliest)
			earliest = daemon->clients[i].pending.deadline_ms;
	/* Queries of the responders wait for names: look at them ten times a second. */
	dns_ms = sandbox_registry_dns_wait_ms(&daemon->registry);
	if (dns_ms >= 0 && now + (uint64_t)dns_ms < earliest)
		earliest = now + (uint64_t)dns_ms;
	/* A re-created container cgroup waits for its first process: look every few ms. */
	if (containers_wait_ms(&daemon->registry) >= 0 &&
	    now + (uint64_t)containers_wait_ms(&daemon->registry) < earliest)
		earliest = now + (uint64_t)containers_wait_ms(&daemon->registry);
	if (sandbox_netns_wait_ms(&daemon->registry) >= 0 &&
	    now + (uint64_t)sandbox_netns_wait_ms(&daemon->registry) < earliest)
		earliest = now + (uint64_t)sandbox_netns_wait_ms(&daemon->registry);
	if (earliest == UINT64_MAX)
		return -1;
	return earliest > now ? (int)(earliest - now) : 0;
}

static void daemon_metrics_serve(struct daemon *daemon)
{
	metrics_http_serve(daemon->metrics_fd, &daemon->registry);
}

static int daemon_metrics_listen(struct daemon *daemon, const char *address)
{
	int fd = metrics_http_listen(address);

	if (fd < 0)
		return fd;
	if (daemon_epoll_add(daemon, fd)) {
		int err = -errno;

		close(fd);
		return err;
	}
	daemon->metrics_fd = fd;
	return 0;
}

static int daemon_loop(struct daemon *daemon)
{
	struct epoll_event events[32];

	for (;;) {
		int count = epoll_wait(daemon->epoll_fd, events, 32, daemon_wait_ms(daemon));

		if (count < 0 && errno == EINTR)
			continue;
		if (count < 0)
			return -errno;
		for (int i = 0; i < count; i++) {
			int fd = events[i].data.fd;
			struct daemon_client *client;

			if (fd == daemon->signal_fd) {
				log_info("stopping; attached sandboxes stay enforced");
				return 0;
			}
			if (fd == daemon->listen_fd)
				daemon_accept(daemon);
			else if (fd == daemon->timer_fd)
				daemon_tick(daemon);
			else if (fd == daemon->sweep_fd)
				daemon_sweep(daemon);
			else if (daemon->resolver &&
				 resolver_handle_fd(daemon->resolver, fd, events[i].events))
				continue;
			else if (sandbox_registry_dns_handle(&daemon->registry, fd,
							     events[i].events))
				continue;
			else if (events_handle_fd(daemon->events, fd, events[i].events))
				continue;
			else if (containers_handle_fd(&daemon->registry, fd))
				continue;
			else if (fd == daemon->metrics_fd)
				daemon_metrics_serve(daemon);
			else if ((client = daemon_client_of(daemon, fd)))
				daemon_client_read(daemon, client);
		}
		daemon_after_events(daemon);
	}
}

static int daemon_setup_events(struct daemon *daemon)
{
	time_t interval = daemon->options->verify_interval_seconds;
	struct itimerspec tick = {{interval, 0}, {interval, 0}};
	struct itimerspec sweep = {{0, DAEMON_SWEEP_MS * 1000000L},
				   {0, DAEMON_SWEEP_MS * 1000000L}};
	sigset_t signals;

	sigemptyset(&signals);
	sigaddset(&signals, SIGINT);
	sigaddset(&signals, SIGTERM);
	sigprocmask(SIG_BLOCK, &signals, NULL);
	signal(SIGPIPE, SIG_IGN);
	daemon->signal_fd = signalfd(-1, &signals, SFD_CLOEXEC);
	daemon->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	daemon->sweep_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (daemon->signal_fd < 0 || daemon->timer_fd < 0 || daemon->sweep_fd < 0 ||
	    timerfd_settime(daemon->timer_fd, 0, &tick, NULL) ||
	    timerfd_settime(daemon->sweep_fd, 0, &sweep, NULL))
		return -errno;
	if (daemon_epoll_add(daemon, daemon->signal_fd) ||
	    daemon_epoll_add(daemon, daemon->timer_fd) ||
	    daemon_epoll_add(daemon, daemon->sweep_fd) ||
	    daemon_epoll_add(daemon, daemon->listen_fd))
		return -errno;
	return 0;
}

static int daemon_setup_resolver(struct daemon *daemon)
{
	int err;

	daemon->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (daemon->epoll_fd < 0)
		return -errno;
	err = resolver_open(&daemon->options->resolver, daemon->epoll_fd, &daemon->resolver);
	if (err)
		return err;
	if (daemon_epoll_add(daemon, resolver_timer_fd(daemon->resolver)))
		return -errno;
	daemon->registry.resolver = daemon->resolver;
	daemon->dns.epoll_fd = daemon->epoll_fd;
	daemon->dns.rate_per_second = daemon->options->dns_rate;
	daemon->dns.resolver = daemon->resolver;
	sandbox_registry_set_dns(&daemon->registry, &daemon->dns);
	err = events_open(daemon->registry.loader, &daemon->registry, daemon->epoll_fd,
			  &daemon->events);
	if (err)
		return err;
	daemon->registry.events = daemon->events;
	daemon->registry.events_enabled = daemon->options->events;
	return 0;
}

/* Nothing refuses AF_VSOCK without BPF LSM: a live transport is said at start. */
static void daemon_vsock_warn(struct daemon *daemon)
{
	char transport[128];

	daemon->registry.judges_vsock = true;
	daemon->registry.accept_vsock = daemon->options->accept_vsock;
	if (!verify_vsock_transport(transport, sizeof(transport)))
		return;
	if (loader_hook_available(daemon->registry.loader, LOADER_HOOK_SOCKET_LSM))
		log_info("vsock transport live (%s): BPF LSM refuses AF_VSOCK to sandboxes",
			 transport);
	else
		log_warn("vsock transport live (%s) and no BPF LSM: nothing refuses AF_VSOCK to "
			 "sandboxes; verify fails its vsock check%s",
			 transport,
			 daemon->options->accept_vsock
				 ? " but for --accept-vsock (accepted)"
				 : " unless the daemon runs with --accept-vsock");
}

/* One daemon per pin directory: a second one would hand out the same generations. */
static int daemon_lock(const char *bpffs_dir)
{
	int fd = open(bpffs_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		log_error("another bfbpf daemon uses %s", bpffs_dir);
		close(fd);
		return -EBUSY;
	}
	return fd;
}

/* The pin directory on a bpffs, held by this daemon alone, and the programs loaded into it. */
static int daemon_open_pins(const struct daemon_options *options, int *lock_fd,
			    struct loader **loader)
{
	int err = daemon_bpffs_ensure(options->bpffs_dir);

	if (err)
		return err;
	err = daemon_mkdir_parents(options->bpffs_dir, 0700);
	if (!err && mkdir(options->bpffs_dir, 0700) && errno != EEXIST)
		err = -errno;
	if (err) {
		log_error("creating %s: %s", options->bpffs_dir, strerror(-err));
		return err;
	}
	*lock_fd = daemon_lock(options->bpffs_dir);
	if (*lock_fd < 0)
		return *lock_fd;
	err = loader_open(options->bpffs_dir, loader);
	if (err)
		return err;
	malloc_trim(0); /* loading parsed the kernel's BTF: tens of MiB, no longer needed */
	return 0;
}

/* Closes what daemon_run opened, in reverse order (each part may be missing). */
static void daemon_close(struct daemon *daemon, int lock_fd, struct loader *loader)
{
	for (int i = 0; i < DAEMON_MAX_CLIENTS; i++)
		if (daemon->clients[i].fd >= 0)
			daemon_client_close(daemon, &daemon->clients[i]);
	if (daemon->listen_fd >= 0) {
		close(daemon->listen_fd);
		unlink(daemon->options->socket_path);
	}
	if (daemon->epoll_fd >= 0)
		close(daemon->epoll_fd);
	if (daemon->timer_fd >= 0)
		close(daemon->timer_fd);
	if (daemon->sweep_fd >= 0)
		close(daemon->sweep_fd);
	if (daemon->signal_fd >= 0)
		close(daemon->signal_fd);
	containers_close(&daemon->registry);
	sandbox_registry_free(&daemon->registry);
	events_close(daemon->events);
	if (daemon->metrics_fd >= 0)
		close(daemon->metrics_fd);
	resolver_close(daemon->resolver);
	if (lock_fd >= 0)
		close(lock_fd);
	loader_close(loader);
}

int daemon_run(const struct daemon_options *options)
{
	struct daemon daemon = {.options = options,
				.listen_fd = -1,
				.signal_fd = -1,
				.timer_fd = -1,
				.sweep_fd = -1,
				.epoll_fd = -1,
				.metrics_fd = -1};
	char state_dir[PATH_MAX], socket_copy[PATH_MAX];
	struct loader *loader = NULL;
	int lock_fd = -1, err;

	for (int i = 0; i < DAEMON_MAX_CLIENTS; i++)
		daemon_client_reset(&daemon.clients[i]);
	/*
	 * A fixed threshold: the buffers of a large request (its JSON, entries,
	 * keys) are mapped and go back whole when freed. glibc's default raises
	 * the threshold after such a free, and the next large buffers then grow
	 * the heap, where the long-lived state of many sandboxes pins them.
	 */
	mallopt(M_MMAP_THRESHOLD, DAEMON_MMAP_THRESHOLD);
	snprintf(socket_copy, sizeof(socket_copy), "%s", options->socket_path);
	snprintf(state_dir, sizeof(state_dir), "%s", options->state_dir ? options->state_dir : "");
	if (!options->state_dir)
		snprintf(state_dir, sizeof(state_dir), "%s/state", dirname(socket_copy));
	err = daemon_open_pins(options, &lock_fd, &loader);
	if (err)
		goto cleanup;
	err = daemon_mkdir_parents(state_dir, 0700);
	if (!err)
		err = sandbox_registry_init(&daemon.registry, loader, state_dir);
	if (err) {
		log_error("state directory %s: %s", state_dir, strerror(-err));
		goto cleanup;
	}
	err = daemon_setup_resolver(&daemon);
	if (err) {
		log_error("cannot start the resolver: %s", strerror(-err));
		goto cleanup;
	}
	err = sandbox_registry_adopt(&daemon.registry);
	if (err)
		goto cleanup;
	/* After the adoption: a record names the sandbox it already has, or waits for one. */
	daemon.registry.policy_dir = options->policy_dir;
	err = containers_open(&daemon.registry, state_dir);
	if (!err)
		err = daemon_epoll_add(&daemon, containers_fd(&daemon.registry));
	if (err) {
		log_error("container records in %s: %s", state_dir, strerror(-err));
		goto cleanup;
	}
	/* After the adoption, which reads the maps whole: from now on, replies come first. */
	if (background_start(&daemon.registry.background))
		log_warn("no background worker: deletes and state files run in the loop");
	daemon.listen_fd = daemon_listen(options->socket_path, options->socket_group);
	if (daemon.listen_fd < 0) {
		err = daemon.listen_fd;
		goto cleanup;
	}
	err = daemon_setup_events(&daemon);
	if (err)
		goto cleanup;
	if (options->metrics_listen) {
		err = daemon_metrics_listen(&daemon, options->metrics_listen);
		if (err) {
			log_error("--metrics-listen %s: %s", options->metrics_listen,
				  strerror(-err));
			goto cleanup;
		}
	}
	daemon_vsock_warn(&daemon);
	log_info("serving %s (pins in %s, %zu sandboxes adopted)", options->socket_path,
		 options->bpffs_dir, daemon.registry.count);
	err = daemon_loop(&daemon);
cleanup:
	daemon_close(&daemon, lock_fd, loader);
	return err;
}
