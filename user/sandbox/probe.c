// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "dns/names.h"
#include "lib/cgroup.h"
#include "probe.h"

#define PROBE_PORT 9 /* discard */
#define PROBE_TIMEOUT_MS 3000

enum probe_kind {
	PROBE_UDP4_DENIED,
	PROBE_UDP6_DENIED,
	PROBE_UDP_MAPPED_DENIED,
	PROBE_SENDTO_DENIED,
	PROBE_RAW4,
	PROBE_RAW6,
	PROBE_PING,
	PROBE_PACKET,
	PROBE_UDP_ALLOWED,
	PROBE_COUNT,
};

static const char *const probe_names[PROBE_COUNT] = {
	[PROBE_UDP4_DENIED] = "probe:udp4_connect_denied",
	[PROBE_UDP6_DENIED] = "probe:udp6_connect_denied",
	[PROBE_UDP_MAPPED_DENIED] = "probe:udp_mapped_connect_denied",
	[PROBE_SENDTO_DENIED] = "probe:udp_sendto_denied",
	[PROBE_RAW4] = "probe:raw4_socket",
	[PROBE_RAW6] = "probe:raw6_socket",
	[PROBE_PING] = "probe:ping_socket",
	[PROBE_PACKET] = "probe:packet_socket",
	[PROBE_UDP_ALLOWED] = "probe:udp_connect_allowed",
};

/* Documentation and benchmark ranges: never a real destination. */
static const char *const probe_denied_v4[] = {"192.0.2.1", "198.51.100.1", "203.0.113.1",
					      "198.19.255.254"};
static const char *const probe_denied_v6[] = {"2001:db8::1", "2001:db8:ffff::1", "fd00:bf::1",
					      "100::1"};

/* Addresses to use, chosen in the parent and inherited by the child. */
struct probe_targets {
	bool have_v4, have_v6, have_allowed;
	struct in6_addr v4_mapped; /* ::ffff:a.b.c.d */
	struct in6_addr v6;
	struct in6_addr allowed;
	uint16_t allowed_port;
};

static bool probe_pick(const struct allowset *allowed, const char *const *candidates, size_t count,
		       int family, struct in6_addr *out)
{
	for (size_t i = 0; i < count; i++) {
		struct in6_addr addr = {0};

		if (family == AF_INET) {
			addr.s6_addr[10] = 0xff;
			addr.s6_addr[11] = 0xff;
			inet_pton(AF_INET, candidates[i], &addr.s6_addr[12]);
		} else {
			inet_pton(AF_INET6, candidates[i], &addr);
		}
		if (!allowset_covers(allowed, addr.s6_addr, PROBE_PORT)) {
			*out = addr;
			return true;
		}
	}
	return false;
}

static void probe_targets_choose(const struct probe_plan *plan, struct probe_targets *targets)
{
	memset(targets, 0, sizeof(*targets));
	targets->have_v4 = probe_pick(plan->allowed, probe_denied_v4,
				      sizeof(probe_denied_v4) / sizeof(probe_denied_v4[0]), AF_INET,
				      &targets->v4_mapped);
	targets->have_v6 = probe_pick(plan->allowed, probe_denied_v6,
				      sizeof(probe_denied_v6) / sizeof(probe_denied_v6[0]),
				      AF_INET6, &targets->v6);
	/*
	 * The first allowed entry's first address (a network address still
	 * routes). Not a CIDR's loopback first address (0.0.0.0/0, ::/0): the
	 * kernel judges that as loopback, which no CIDR opens.
	 */
	for (size_t i = 0; i < plan->allowed->count && !targets->have_allowed; i++) {
		const struct allowset_entry *entry = &plan->allowed->entries[i];

		memcpy(&targets->allowed, entry->addr, 16);
		if (entry->prefix_len < 128 && names_address_is_loopback(&targets->allowed))
			continue;
		targets->allowed_port = entry->port ? entry->port : PROBE_PORT;
		targets->have_allowed = true;
	}
}

static bool probe_is_v4(const struct in6_addr *addr)
{
	return IN6_IS_ADDR_V4MAPPED(addr);
}

/* connect() of a UDP socket: the hook judges it, and no packet is sent. Returns errno or 0. */
static int probe_udp_connect(const struct in6_addr *addr, uint16_t port, bool as_mapped_v6)
{
	int fd, err = 0;

	if (probe_is_v4(addr) && !as_mapped_v6) {
		struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};

		memcpy(&sin.sin_addr, &addr->s6_addr[12], 4);
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return errno;
		if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)))
			err = errno;
	} else {
		struct sockaddr_in6 sin6 = {
			.sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = *addr};

		fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return errno;
		if (connect(fd, (struct sockaddr *)&sin6, sizeof(sin6)))
			err = errno;
	}
	close(fd);
	return err;
}

/*
 * An unconnected sendto to a denied address. Bound to the loopback device so
 * that, should the hook fail to refuse it, the datagram still never leaves
 * the host.
 */
static int probe_udp_sendto(const struct in6_addr *addr)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(PROBE_PORT)};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return errno;
	memcpy(&sin.sin_addr, &addr->s6_addr[12], 4);
	if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3))
		err = errno;
	else if (sendto(fd, "x", 1, 0, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		err = errno;
	close(fd);
	return err;
}

static int probe_socket(int family, int type, int protocol)
{
	int fd = socket(family, type | SOCK_CLOEXEC, protocol);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int probe_drop_net_raw(void)
{
	struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &header, data))
		return errno;
	data[0].effective &= ~(1u << CAP_NET_RAW);
	data[0].permitted &= ~(1u << CAP_NET_RAW);
	return syscall(SYS_capset, &header, data) ? errno : 0;
}

/* In the child, already in the cgroup: every result is an errno, 0 for success. */
static void probe_child_run(const struct probe_plan *plan, const struct probe_targets *targets,
			    int results[PROBE_COUNT])
{
	for (int i = 0; i < PROBE_COUNT; i++)
		results[i] = -1; /* not run */
	if (targets->have_v4) {
		results[PROBE_UDP4_DENIED] =
			probe_udp_connect(&targets->v4_mapped, PROBE_PORT, false);
		results[PROBE_UDP_MAPPED_DENIED] =
			probe_udp_connect(&targets->v4_mapped, PROBE_PORT, true);
		results[PROBE_SENDTO_DENIED] = probe_udp_sendto(&targets->v4_mapped);
	}
	if (targets->have_v6)
		results[PROBE_UDP6_DENIED] = probe_udp_connect(&targets->v6, PROBE_PORT, false);
	/* With CAP_NET_RAW still held, only bfbpf can refuse these. */
	results[PROBE_RAW4] = probe_socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	results[PROBE_RAW6] = probe_socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6);
	results[PROBE_PING] = probe_socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
	/* Without BPF LSM, packet sockets are refused to sandboxes without CAP_NET_RAW
	 * (which the packet_sockets check demands): probe as such a process. */
	if (!plan->lsm_available && probe_drop_net_raw())
		results[PROBE_PACKET] = -2;
	else
		results[PROBE_PACKET] = probe_socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (targets->have_allowed)
		results[PROBE_UDP_ALLOWED] =
			probe_udp_connect(&targets->allowed, targets->allowed_port, false);
}

struct probe_child_arg {
	const struct probe_plan *plan;
	const struct probe_targets *targets;
};

static void probe_child(int joined, int write_fd, const void *arg)
{
	const struct probe_child_arg *child = arg;
	int results[PROBE_COUNT];

	if (joined)
		_exit(2); /* the parent reads nothing: could not join */
	probe_child_run(child->plan, child->targets, results);
	if (write(write_fd, results, sizeof(results)) != (ssize_t)sizeof(results))
		_exit(4);
	_exit(0);
}

pid_t probe_spawn(const char *cgroup, int netns_fd, probe_child_fn fn, const void *arg,
		  int *read_fd)
{
	int pipe_fds[2], err;
	pid_t child;

	if (pipe2(pipe_fds, O_CLOEXEC))
		return -errno;
	child = fork();
	if (child < 0) {
		err = -errno;
		close(pipe_fds[0]);
		close(pipe_fds[1]);
		return err;
	}
	if (child == 0) {
		close(pipe_fds[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		err = cgroup_join(cgroup, 0);
		if (!err && netns_fd >= 0 && setns(netns_fd, CLONE_NEWNET))
			err = -errno;
		fn(err, pipe_fds[1], arg);
		_exit(0);
	}
	close(pipe_fds[1]);
	*read_fd = pipe_fds[0];
	return child;
}

void probe_reap(pid_t child, int read_fd)
{
	int status;

	close(read_fd);
	kill(child, SIGKILL);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
}

static void probe_format_address(const struct in6_addr *addr, char *out, size_t size)
{
	if (probe_is_v4(addr))
		inet_ntop(AF_INET, &addr->s6_addr[12], out, size);
	else
		inet_ntop(AF_INET6, addr, out, size);
}

static void probe_report(json_t *checks, bool *complete, int kind, bool ok, const char *detail)
{
	json_array_append_new(checks, json_pack("{s:s, s:b, s:s}", "name", probe_names[kind], "ok",
						ok, "detail", detail));
	if (!ok)
		*complete = false;
}

static const char *probe_outcome(int result)
{
	if (result == 0)
		return "succeeded";
	if (result == -1)
		return "not run";
	if (result == -2)
		return "could not drop CAP_NET_RAW";
	return strerror(result);
}

static void probe_evaluate(const struct probe_plan *plan, const struct probe_targets *targets,
			   const int results[PROBE_COUNT], json_t *checks, bool *complete)
{
	char v4[INET6_ADDRSTRLEN], v6[INET6_ADDRSTRLEN], allowed[INET6_ADDRSTRLEN];
	char detail[PROBE_COUNT][256];

	probe_format_address(&targets->v4_mapped, v4, sizeof(v4));
	probe_format_address(&targets->v6, v6, sizeof(v6));
	probe_format_address(&targets->allowed, allowed, sizeof(allowed));
	snprintf(detail[PROBE_UDP4_DENIED], 256, "connect to %s:%d (not allowed): %s", v4,
		 PROBE_PORT, probe_outcome(results[PROBE_UDP4_DENIED]));
	snprintf(detail[PROBE_UDP_MAPPED_DENIED], 256, "connect to ::ffff:%s:%d (not allowed): %s",
		 v4, PROBE_PORT, probe_outcome(results[PROBE_UDP_MAPPED_DENIED]));
	snprintf(detail[PROBE_SENDTO_DENIED], 256, "sendto %s:%d (not allowed): %s", v4, PROBE_PORT,
		 probe_outcome(results[PROBE_SENDTO_DENIED]));
	snprintf(detail[PROBE_UDP6_DENIED], 256, "connect to [%s]:%d (not allowed): %s", v6,
		 PROBE_PORT, probe_outcome(results[PROBE_UDP6_DENIED]));
	snprintf(detail[PROBE_RAW4], 256, "socket(AF_INET, SOCK_RAW): %s",
		 probe_outcome(results[PROBE_RAW4]));
	snprintf(detail[PROBE_RAW6], 256, "socket(AF_INET6, SOCK_RAW): %s",
		 probe_outcome(results[PROBE_RAW6]));
	snprintf(detail[PROBE_PING], 256, "socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP): %s",
		 probe_outcome(results[PROBE_PING]));
	snprintf(detail[PROBE_PACKET], 256, "socket(AF_PACKET)%s: %s",
		 plan->lsm_available ? "" : " without CAP_NET_RAW, as the sandbox",
		 probe_outcome(results[PROBE_PACKET]));
	snprintf(detail[PROBE_UDP_ALLOWED], 256, "connect to %s port %u (allowed): %s", allowed,
		 targets->allowed_port, probe_outcome(results[PROBE_UDP_ALLOWED]));
	for (int kind = 0; kind < PROBE_COUNT; kind++) {
		int result = results[kind];
		bool refused = result == EPERM || (kind == PROBE_PING && result == EACCES);

		if (kind == PROBE_UDP_ALLOWED) {
			if (!targets->have_allowed)
				continue; /* the policy allows nothing: nothing to prove */
			probe_report(checks, complete, kind, result != EPERM && result != -1,
				     detail[kind]);
		} else if (result == -1 &&
			   (kind == PROBE_UDP4_DENIED || kind == PROBE_UDP_MAPPED_DENIED ||
			    kind == PROBE_SENDTO_DENIED || kind == PROBE_UDP6_DENIED)) {
			probe_report(checks, complete, kind, true,
				     "every candidate address is allowed by the policy");
		} else {
			probe_report(checks, complete, kind, refused, detail[kind]);
		}
	}
}

int probe_run(const struct probe_plan *plan, json_t *checks, bool *complete)
{
	struct probe_targets targets;
	struct probe_child_arg arg = {plan, &targets};
	int results[PROBE_COUNT], read_fd;
	struct pollfd poller;
	ssize_t got = -1;
	pid_t child;

	if (plan->policy && plan->policy->mode == POLICY_MODE_PUBLIC)
		return 0; /* nothing is denied: no probe can fail or prove anything */
	probe_targets_choose(plan, &targets);
	child = probe_spawn(plan->cgroup_path, plan->netns_fd, probe_child, &arg, &read_fd);
	if (child < 0)
		return (int)child;
	poller = (struct pollfd){.fd = read_fd, .events = POLLIN};
	if (poll(&poller, 1, PROBE_TIMEOUT_MS) == 1)
		got = read(read_fd, results, sizeof(results));
	probe_reap(child, read_fd);
	if (got != (ssize_t)sizeof(results)) {
		json_array_append_new(
			checks, json_pack("{s:s, s:b, s:s}", "name", "probes", "ok", 0, "detail",
					  "the probe process could not join the cgroup or "
					  "namespace, or did not answer in time"));
		*complete = false;
		return 0;
	}
	probe_evaluate(plan, &targets, results, checks, complete);
	return 0;
}
