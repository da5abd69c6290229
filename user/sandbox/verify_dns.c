// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * verify's "dns" check: a real DNS query from inside the sandbox, in each
 * network namespace its processes use (and its own), must be answered by
 * its responder. The rule (docs/dns.md "verify"): allowlist policies only
 * (no-network and public expect no name to resolve); the query asks
 * RESPONDER_LIVENESS_NAME, which the responder answers NXDOMAIN and counts,
 * whatever the policy; the check passes when the process got that answer
 * and the responder counted it (not some other listener on the port).
 */
#include <ares.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "dns/responder.h"
#include "lib/log.h"
#include "probe.h"
#include "sandbox_netns.h"
#include "verify.h"

#define VERIFY_DNS_MAX_NETNS 8
#define VERIFY_DNS_TIMEOUT_MS 2000
#define VERIFY_DNS_SERVER "192.0.2.53" /* any server: port 53 goes to the responder */

/* In the child: the rcode of the answer, or -errno. */
static int verify_dns_ask(void)
{
	struct sockaddr_in server = {.sin_family = AF_INET, .sin_port = htons(53)};
	struct timeval timeout = {.tv_sec = VERIFY_DNS_TIMEOUT_MS / 1000};
	unsigned char *query = NULL;
	uint8_t reply[512];
	int length = 0, fd, err = 0;
	ssize_t got = -1;

	/* id 0xbf53, recursion desired, IN A of the liveness name; built by c-ares. */
	if (ares_create_query(RESPONDER_LIVENESS_NAME, 1, 1, 0xbf53, 1, &query, &length, 0) !=
	    ARES_SUCCESS)
		return -ENOMEM;
	inet_pton(AF_INET, VERIFY_DNS_SERVER, &server.sin_addr);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		err = -errno;
	else if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) ||
		 connect(fd, (struct sockaddr *)&server, sizeof(server)) ||
		 send(fd, query, (size_t)length, 0) < 0 ||
		 (got = recv(fd, reply, sizeof(reply), 0)) < 0)
		err = -errno;
	if (fd >= 0)
		close(fd);
	ares_free_string(query);
	if (err)
		return err;
	if (got < 12 || reply[0] != 0xbf || reply[1] != 0x53 || !(reply[2] & 0x80))
		return -EBADMSG;
	return reply[3] & 0x0f;
}

/* In the sandbox (probe_spawn): the query is the sandbox's. */
static void verify_dns_child(int joined, int write_fd, const void *arg)
{
	int result = joined;

	(void)arg;
	if (!result)
		result = verify_dns_ask();
	if (write(write_fd, &result, sizeof(result)) != (ssize_t)sizeof(result))
		_exit(4);
	_exit(0);
}

/*
 * One query from one namespace; the daemon's loop waits while verify runs,
 * so this answers in its place (responder_drain). Returns the child's result
 * and whether the responder counted the query.
 */
static int verify_dns_one(struct sandbox *sandbox, const char *cgroup, int netns_fd, bool *counted)
{
	uint64_t before = responder_liveness(sandbox->responder), deadline;
	int read_fd, result = -ETIMEDOUT;
	pid_t child;

	child = probe_spawn(cgroup, netns_fd, verify_dns_child, NULL, &read_fd);
	if (child < 0)
		return (int)child;
	deadline = log_monotonic_ms() + VERIFY_DNS_TIMEOUT_MS + 500;
	while (log_monotonic_ms() < deadline) {
		struct pollfd poller = {.fd = read_fd, .events = POLLIN};

		responder_drain(sandbox->responder);
		if (poll(&poller, 1, 20) == 1) {
			if (read(read_fd, &result, sizeof(result)) != (ssize_t)sizeof(result))
				result = -EIO;
			break;
		}
	}
	probe_reap(child, read_fd);
	*counted = responder_liveness(sandbox->responder) > before;
	return result;
}

static void verify_dns_describe(int result, bool counted, char *out, size_t size)
{
	if (result == 3 && counted)
		snprintf(out, size, "answered by its responder");
	else if (result >= 0)
		snprintf(out, size, "answered (rcode %d) by something else listening on its port",
			 result);
	else if (result == -ECONNREFUSED)
		snprintf(out, size, "nothing listens on its responder's port there");
	else if (result == -EAGAIN || result == -ETIMEDOUT)
		snprintf(out, size, "no answer in %d ms", VERIFY_DNS_TIMEOUT_MS);
	else
		snprintf(out, size, "%s", strerror(-result));
}

/* long: the namespaces in turn, one query each, and the one check that sums them up. */
void verify_dns(struct sandbox_registry *registry, struct sandbox *sandbox, const char *cgroup,
		json_t *checks, bool *complete)
{
	struct sandbox_netns_seen seen[VERIFY_DNS_MAX_NETNS];
	uint64_t primary;
	size_t count, asked = 0, failed = 0, used = 0;
	char detail[1024], why[128];

	if (!sandbox->responder || !sandbox->policy_known ||
	    sandbox->policy.mode != POLICY_MODE_ALLOWLIST)
		return; /* no name is expected to resolve: nothing to prove */
	/* The namespaces in use now, each with its socket if it can have one. */
	count = sandbox_netns_sweep(registry, sandbox, seen, VERIFY_DNS_MAX_NETNS);
	primary = responder_netns_key(sandbox->responder);
	detail[0] = '\0';
	for (size_t i = 0; i <= count; i++) {
		bool counted = false;
		int fd = -1, result;
		uint64_t key;

		if (i == count) { /* its own namespace (the daemon's, or --netns) */
			key = primary;
			fd = sandbox->netns_fd >= 0 ? dup(sandbox->netns_fd) : -1;
		} else {
			char path[64];
			struct stat st;

			key = seen[i].key;
			if (key == primary)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)seen[i].pid);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0 || fstat(fd, &st) || (uint64_t)st.st_ino != key) {
				if (fd >= 0)
					close(fd);
				continue; /* the process went */
			}
		}
		result = verify_dns_one(sandbox, cgroup, fd, &counted);
		if (fd >= 0)
			close(fd);
		asked++;
		if (result == 3 && counted)
			continue;
		failed++;
		verify_dns_describe(result, counted, why, sizeof(why));
		used += (size_t)snprintf(
			detail + used, used < sizeof(detail) ? sizeof(detail) - used : 0,
			"%snetwork namespace %" PRIu64 ": %s", failed > 1 ? "; " : "", key, why);
		if (used >= sizeof(detail))
			break;
	}
	if (!failed)
		snprintf(detail, sizeof(detail),
			 "a query from the sandbox was answered by its responder in %zu network "
			 "namespace%s",
			 asked, asked == 1 ? "" : "s");
	json_array_append_new(checks, json_pack("{s:s, s:b, s:s}", "name", "dns", "ok", !failed,
						"detail", detail));
	if (failed)
		*complete = false;
}
