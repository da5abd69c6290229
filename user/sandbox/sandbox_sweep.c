// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A refused flow fails fast (issue 20, docs/threat-model.md "Names bound to
 * TLS"). The egress judge can only drop packets: the client would wait for
 * TCP's timeout. The daemon destroys such sockets with sock_diag SOCK_DESTROY,
 * in the sandbox's network namespace, and the client sees ECONNABORTED:
 * - flows the judge refused (their sni_flows state, read with the dump);
 * - flows held undecided for longer than SANDBOX_SWEEP_HELD_NS (a truncated
 *   ClientHello, a client that never completes its request head);
 * - after an update (a relock), the sandbox's flows to a destination the new
 *   policy no longer allows (they would stall until the client's timeout):
 *   the sockets its programs judge, those of its own cgroup and of every
 *   descendant cgroup whose nearest registered ancestor it is (as the BPF
 *   programs judge them: a container's processes often live in child cgroups).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "dns/responder.h"
#include "lib/cgroup.h"
#include "lib/log.h"
#include "sandbox.h"

/* A flow held back longer than this is destroyed (a hello that never completes). */
#define SANDBOX_SWEEP_HELD_NS (2000ULL * 1000 * 1000)
/* Sockets destroyed per dump, at most; a full round dumps again (a relock may cut more). */
#define SANDBOX_SWEEP_MAX 256
/* Rounds per namespace and sweep, at most (the rest wait for the next sweep). */
#define SANDBOX_SWEEP_ROUNDS 16
/* Levels walked up from a socket's cgroup to find its nearest registered one. */
#define SANDBOX_SWEEP_MAX_DEPTH 64

/* Netlink attributes (linux/netlink.h has their layout, not the walk). */
#define NLA_OK(a, len)                                                                             \
	((len) >= (int)sizeof(struct nlattr) && (a)->nla_len >= sizeof(struct nlattr) &&           \
	 (a)->nla_len <= (len))
#define NLA_NEXT(a, len)                                                                           \
	((len) -= NLA_ALIGN((a)->nla_len), (struct nlattr *)((char *)(a) + NLA_ALIGN((a)->nla_len)))
#define NLA_DATA(a) ((void *)((char *)(a) + NLA_HDRLEN))
#define NLA_PAYLOAD(a) ((int)(a)->nla_len - NLA_HDRLEN)

struct sandbox_sweep {
	struct sandbox_registry *registry;
	const struct sandbox *sandbox;
	bool relock; /* also the flows the sandbox's policy no longer allows */
	uint64_t now_ns;
	size_t count;	  /* victims, in the namespace being swept */
	size_t destroyed; /* in every namespace */
	struct inet_diag_req_v2 victims[SANDBOX_SWEEP_MAX];
};

/* A NETLINK_SOCK_DIAG socket in a network namespace (-1: the daemon's own). */
static int sandbox_sweep_socket(int netns_fd)
{
	int self, fd, err = 0;

	if (netns_fd < 0) {
		fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
		return fd < 0 ? -errno : fd;
	}
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return -errno;
	if (setns(netns_fd, CLONE_NEWNET)) {
		err = -errno;
		close(self);
		return err;
	}
	/* A socket stays in the namespace it was made in. */
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		err = -errno;
	if (setns(self, CLONE_NEWNET))
		log_error("could not return to the daemon's network namespace: %s",
			  strerror(errno));
	close(self);
	return fd < 0 ? err : fd;
}

/* The attribute of this type among attrs, or NULL. */
static struct nlattr *sandbox_sweep_attr(struct nlattr *attr, int len, int type)
{
	for (; NLA_OK(attr, len); attr = NLA_NEXT(attr, len))
		if ((attr->nla_type & NLA_TYPE_MASK) == type)
			return attr;
	return NULL;
}

/*
 * The judge's state of a socket, if the dump carried one of sni_flows (the
 * only map asked for): INET_DIAG_SK_BPF_STORAGES > SK_DIAG_BPF_STORAGE >
 * SK_DIAG_BPF_STORAGE_MAP_VALUE.
 */
static const struct bfbpf_sni_flow *sandbox_sweep_flow(struct nlattr *attrs, int len)
{
	struct nlattr *a = sandbox_sweep_attr(attrs, len, INET_DIAG_SK_BPF_STORAGES);

	if (a)
		a = sandbox_sweep_attr(NLA_DATA(a), NLA_PAYLOAD(a), SK_DIAG_BPF_STORAGE);
	if (a)
		a = sandbox_sweep_attr(NLA_DATA(a), NLA_PAYLOAD(a), SK_DIAG_BPF_STORAGE_MAP_VALUE);
	if (!a || NLA_PAYLOAD(a) < (int)sizeof(struct bfbpf_sni_flow))
		return NULL;
	return NLA_DATA(a);
}

static uint64_t sandbox_sweep_cgroup(struct nlattr *attrs, int len)
{
	struct nlattr *a = sandbox_sweep_attr(attrs, len, INET_DIAG_CGROUP_ID);
	uint64_t id = 0;

	if (a && NLA_PAYLOAD(a) >= (int)sizeof(id))
		memcpy(&id, NLA_DATA(a), sizeof(id));
	return id;
}

/* Does the sandbox's policy in force still allow this established flow's destination? */
static bool sandbox_sweep_allowed(const struct sandbox *sandbox, const struct inet_diag_msg *msg)
{
	uint8_t addr[16] = {0};
	uint16_t port = ntohs(msg->id.idiag_dport);

	if (msg->idiag_family == AF_INET) {
		addr[10] = addr[11] = 0xff;
		memcpy(&addr[12], msg->id.idiag_dst, 4);
		if (addr[12] == 127 || !memcmp(&addr[12], "\0\0\0\0", 4))
			return true; /* loopback is judged by its own rules: left alone */
	} else {
		memcpy(addr, msg->id.idiag_dst, 16);
		if (IN6_IS_ADDR_LOOPBACK((struct in6_addr *)addr) ||
		    IN6_IS_ADDR_V4MAPPED((struct in6_addr *)addr))
			return true;
	}
	if (sandbox->policy.mode == POLICY_MODE_PUBLIC)
		return true;
	return allowset_covers(&sandbox->applied, addr, port);
}

/*
 * Do the sandbox's programs judge the sockets of this cgroup: is the sandbox
 * the nearest registered cgroup among it and its ancestors? (A guard defers
 * to a registered cgroup below it; a sandbox has none below it.) A cgroup
 * that cannot be opened (removed: -ESTALE) cannot be placed: not judged here.
 */
static bool sandbox_sweep_owns(struct sandbox_sweep *sweep, uint64_t id)
{
	struct cgroup_parents *parents = sweep->registry->cgroup_parents;

	for (unsigned int depth = 0; id && depth < SANDBOX_SWEEP_MAX_DEPTH; depth++) {
		if (id == sweep->sandbox->cgroup_id)
			return true;
		if (!parents || sandbox_find(sweep->registry, id))
			return false; /* another sandbox's (or guard's) programs judge it */
		if (cgroup_parent_of(parents, id, &id))
			return false;
	}
	return false;
}

static void sandbox_sweep_consider(struct sandbox_sweep *sweep, const struct nlmsghdr *h)
{
	const struct inet_diag_msg *msg = NLMSG_DATA(h);
	struct nlattr *attrs = (struct nlattr *)(msg + 1);
	int len = (int)h->nlmsg_len - NLMSG_LENGTH(sizeof(*msg));
	const struct bfbpf_sni_flow *flow = sandbox_sweep_flow(attrs, len);
	bool destroy = false;

	if (flow && flow->state == BFBPF_SNI_REFUSED)
		destroy = true;
	else if (flow && flow->state == BFBPF_SNI_UNDECIDED && flow->since_ns &&
		 sweep->now_ns > flow->since_ns + SANDBOX_SWEEP_HELD_NS)
		destroy = true;
	else if (sweep->relock && msg->idiag_state == TCP_ESTABLISHED &&
		 !sandbox_sweep_allowed(sweep->sandbox, msg) &&
		 sandbox_sweep_owns(sweep, sandbox_sweep_cgroup(attrs, len)))
		destroy = true;
	if (!destroy || sweep->count == SANDBOX_SWEEP_MAX)
		return;
	sweep->victims[sweep->count++] = (struct inet_diag_req_v2){
		.sdiag_family = msg->idiag_family, .sdiag_protocol = IPPROTO_TCP, .id = msg->id};
}

/* One dump of a family's TCP sockets, with their sni_flows state. */
static int sandbox_sweep_dump(int fd, int map_fd, int family, struct sandbox_sweep *sweep)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
		struct nlattr nest;
		struct nlattr map;
		uint32_t map_fd;
	} request = {
		.nlh = {.nlmsg_len = sizeof(request),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
		.req = {.sdiag_family = (uint8_t)family,
			.sdiag_protocol = IPPROTO_TCP,
			/* Every state but listening, time-wait and closed. */
			.idiag_states = 0xfff & ~((1u << TCP_LISTEN) | (1u << TCP_TIME_WAIT) |
						  (1u << TCP_CLOSE))},
		.nest = {.nla_len = 2 * sizeof(struct nlattr) + sizeof(uint32_t),
			 .nla_type = NLA_F_NESTED | INET_DIAG_REQ_SK_BPF_STORAGES},
		.map = {.nla_len = sizeof(struct nlattr) + sizeof(uint32_t),
			.nla_type = SK_DIAG_BPF_STORAGE_REQ_MAP_FD},
		.map_fd = (uint32_t)map_fd,
	};
	static char buf[32768] __attribute__((aligned(8)));

	if (send(fd, &request, sizeof(request), 0) < 0)
		return -errno;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (n < 0)
			return -errno;
		for (; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY)
				sandbox_sweep_consider(sweep, h);
		}
	}
}

static int sandbox_sweep_destroy(int fd, const struct inet_diag_req_v2 *victim)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} request = {
		.nlh = {.nlmsg_len = sizeof(request),
			.nlmsg_type = SOCK_DESTROY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK},
		.req = *victim,
	};
	char buf[512] __attribute__((aligned(8)));
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	ssize_t n;

	if (send(fd, &request, sizeof(request), 0) < 0)
		return -errno;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	if (NLMSG_OK(h, (size_t)n) && h->nlmsg_type == NLMSG_ERROR)
		return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
	return 0;
}

/* One network namespace: a dump of its TCP sockets, then what it chose is destroyed. */
static int sandbox_sweep_netns(struct sandbox_registry *registry, struct sandbox_sweep *sweep,
			       int netns_fd)
{
	int map_fd = loader_sni_flows_fd(registry->loader);
	int fd = sandbox_sweep_socket(netns_fd), err;

	if (fd < 0)
		return fd;
	for (int round = 0; round < SANDBOX_SWEEP_ROUNDS; round++) {
		sweep->count = 0;
		err = sandbox_sweep_dump(fd, map_fd, AF_INET, sweep);
		if (!err)
			err = sandbox_sweep_dump(fd, map_fd, AF_INET6, sweep);
		for (size_t i = 0; i < sweep->count; i++) {
			int ret = sandbox_sweep_destroy(fd, &sweep->victims[i]);

			if (ret && ret != -ENOENT)
				log_warn("%s: destroying a refused flow: %s", sweep->sandbox->path,
					 strerror(-ret));
		}
		sweep->destroyed += sweep->count;
		if (err || sweep->count < SANDBOX_SWEEP_MAX)
			break;
	}
	close(fd);
	return err;
}

/*
 * The sandbox's own namespace, then every other one its processes use (where
 * its responder listens: sandbox_netns.c finds them), for a parent cgroup's
 * containers and a guard's subtree each live in their own.
 */
int sandbox_sweep(struct sandbox_registry *registry, const struct sandbox *sandbox, bool relock)
{
	struct sandbox_sweep *sweep = calloc(1, sizeof(*sweep));
	double started = log_clock_ms();
	struct timespec now;
	size_t spaces = 1;
	int netns, err;

	if (!sweep)
		return -ENOMEM;
	/* Made once, kept: the parents it learns stay true (cgroup.h). NULL: own cgroup only. */
	if (relock && !registry->cgroup_parents)
		registry->cgroup_parents = cgroup_parents_new();
	clock_gettime(CLOCK_MONOTONIC, &now);
	sweep->registry = registry;
	sweep->sandbox = sandbox;
	sweep->relock = relock;
	sweep->now_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	err = sandbox_sweep_netns(registry, sweep, sandbox->netns_fd);
	for (size_t i = 0; sandbox->responder; i++) {
		netns = responder_netns_open(sandbox->responder, i);
		if (netns == -ENOENT)
			break;
		if (netns < 0 || sandbox_sweep_netns(registry, sweep, netns))
			err = err ? err : -EIO;
		if (netns >= 0)
			close(netns);
		spaces++;
	}
	if (sweep->destroyed)
		log_debug("%s: destroyed %zu refused or stale flows", sandbox->path,
			  sweep->destroyed);
	if (relock)
		log_debug("%s: relock sweep of %zu network namespaces in %.1f ms (%" PRIu64
			  " cgroup parents read so far)",
			  sandbox->path, spaces, log_clock_ms() - started,
			  registry->cgroup_parents ? registry->cgroup_parents->misses : 0);
	free(sweep);
	return err;
}

void sandbox_registry_sweep(struct sandbox_registry *registry)
{
	for (size_t i = 0; i < registry->count; i++) {
		const struct sandbox *sandbox = registry->items[i];

		if (!sandbox->policy_known || !policy_sni_enforced(&sandbox->policy))
			continue;
		sandbox_sweep(registry, sandbox, false);
	}
}
