// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the DNS responder (user/dns/responder*.c) through a fake
 * table of operations: real sockets on 127.0.0.1 (no root, no BPF, no
 * network namespace), queries built here, replies read back with c-ares.
 * The fake stands in for the sandbox registry: its "maps" are a list of
 * addresses that refresh programs, and its name cache is the resolver's
 * name table, filled by hand as if upstream had answered.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <cmocka.h>

#include <ares.h>

#include "dns/dns.h"
#include "dns/resolver.h"
#include "dns/responder.h"
#include "lib/policy.h"

#define Q_MAX 512
#define FLAG_RD 0x0100
#define TYPE_TXT 16
#define TYPE_SVCB 64
#define TYPE_HTTPS 65
#define MAX_ADDRS 8

struct msg {
	uint8_t b[Q_MAX];
	size_t n;
};

/* The fake owner: what the sandbox registry would be. */
struct fake {
	struct policy policy;
	bool policy_known;
	bool settled;
	struct names_table *table;
	/* Addresses the name cache returns for a learned name (IPv4 text). */
	const char *cache[MAX_ADDRS];
	/* What refresh programs: every cached address, or only the first. */
	bool program_first_only;
	struct in6_addr programmed[MAX_ADDRS];
	size_t programmed_count;
	int client_fd; /* to see whether a reply left before an operation ran */
	int learn_calls, refresh_calls, refused_calls;
	bool reply_before_learn, reply_before_refresh;
	char learned[HOSTNAME_MAX_LENGTH + 1];
	char refused_name[HOSTNAME_MAX_LENGTH + 2];
	unsigned int refused_qtype;
};

struct harness {
	struct fake fake;
	struct resolver *resolver;
	struct responder_context context;
	struct responder *responder;
	int epoll_fd;
	int udp_fd; /* the client */
	struct sockaddr_in server;
};

static bool reply_waiting(int fd)
{
	uint8_t byte;

	return recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) >= 0;
}

static void mapped(const char *v4, struct in6_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->s6_addr[10] = out->s6_addr[11] = 0xff;
	assert_int_equal(inet_pton(AF_INET, v4, &out->s6_addr[12]), 1);
}

static const struct policy *fake_policy(void *data, void *owner)
{
	struct fake *fake = owner;

	assert_ptr_equal(data, fake);
	return fake->policy_known ? &fake->policy : NULL;
}

/* As sandbox_learn: a reference on the name; here the cache answers at once. */
static int fake_learn(void *data, void *owner, const char *name)
{
	struct fake *fake = owner;
	struct in6_addr addrs[MAX_ADDRS];
	uint32_t ttls[MAX_ADDRS];
	struct names_entry *entry;
	uint64_t now = resolver_now();
	size_t count = 0;

	(void)data;
	fake->learn_calls++;
	fake->reply_before_learn |= reply_waiting(fake->client_fd);
	snprintf(fake->learned, sizeof(fake->learned), "%s", name);
	assert_int_equal(names_ref(fake->table, name, &entry), 0);
	if (entry->resolved_once)
		return 0;
	for (; count < MAX_ADDRS && fake->cache[count]; count++) {
		mapped(fake->cache[count], &addrs[count]);
		ttls[count] = 60;
	}
	names_round_begin(entry, now);
	names_round_answer(&fake->table->config, entry, AF_INET, addrs, ttls, count, now);
	names_round_query_done(&fake->table->config, entry, now);
	names_round_query_done(&fake->table->config, entry, now);
	return 0;
}

static bool fake_settled(void *data, void *owner)
{
	(void)data;
	return ((struct fake *)owner)->settled;
}

/* As sandbox_refresh: the learned name's addresses go into the "maps". */
static void fake_refresh(void *data, void *owner)
{
	struct fake *fake = owner;
	struct names_entry *entry =
		fake->learned[0] ? names_find(fake->table, fake->learned) : NULL;

	(void)data;
	fake->refresh_calls++;
	fake->reply_before_refresh |= reply_waiting(fake->client_fd);
	fake->programmed_count = 0;
	for (size_t i = 0; entry && i < entry->count && i < MAX_ADDRS; i++) {
		fake->programmed[fake->programmed_count++] = entry->addresses[i].addr;
		if (fake->program_first_only)
			break;
	}
}

static bool fake_programmed(void *data, void *owner, const struct in6_addr *addr)
{
	struct fake *fake = owner;

	(void)data;
	for (size_t i = 0; i < fake->programmed_count; i++)
		if (!memcmp(&fake->programmed[i], addr, sizeof(*addr)))
			return true;
	return false;
}

static void fake_refused(void *data, void *owner, const char *name, unsigned int qtype)
{
	struct fake *fake = owner;

	(void)data;
	fake->refused_calls++;
	snprintf(fake->refused_name, sizeof(fake->refused_name), "%s", name);
	fake->refused_qtype = qtype;
}

static bool fake_learned(void *data, void *owner, size_t index, const char **name,
			 time_t *last_used)
{
	struct fake *fake = owner;

	(void)data;
	if (index > 0 || !fake->learned[0])
		return false;
	*name = fake->learned;
	*last_used = 1;
	return true;
}

static const struct responder_ops fake_ops = {
	.policy = fake_policy,
	.learn = fake_learn,
	.settled = fake_settled,
	.refresh = fake_refresh,
	.programmed = fake_programmed,
	.refused = fake_refused,
	.learned = fake_learned,
};

static void put8(struct msg *m, uint8_t v)
{
	assert_true(m->n < sizeof(m->b));
	m->b[m->n++] = v;
}

static void put16(struct msg *m, uint16_t v)
{
	put8(m, (uint8_t)(v >> 8));
	put8(m, (uint8_t)v);
}

static void put_name(struct msg *m, const char *name)
{
	while (*name) {
		const char *dot = strchr(name, '.');
		size_t len = dot ? (size_t)(dot - name) : strlen(name);

		put8(m, (uint8_t)len);
		while (len--)
			put8(m, (uint8_t)*name++);
		if (*name == '.')
			name++;
	}
	put8(m, 0);
}

static void make_query(struct msg *m, uint16_t id, const char *name, uint16_t qtype)
{
	m->n = 0;
	put16(m, id);
	put16(m, FLAG_RD);
	put16(m, 1);
	put16(m, 0);
	put16(m, 0);
	put16(m, 0);
	put_name(m, name);
	put16(m, qtype);
	put16(m, DNS_CLASS_IN);
}

/* Hands whatever the responder's sockets have to it, for up to timeout_ms. */
static void pump(struct harness *h, int timeout_ms)
{
	struct epoll_event events[8];
	int count = epoll_wait(h->epoll_fd, events, 8, timeout_ms);

	for (int i = 0; i < count; i++)
		assert_true(responder_handle_fd(h->responder, events[i].data.fd, events[i].events));
}

static void send_udp(struct harness *h, const void *bytes, size_t length)
{
	assert_int_equal(sendto(h->udp_fd, bytes, length, 0, (struct sockaddr *)&h->server,
				sizeof(h->server)),
			 (ssize_t)length);
	pump(h, 1000);
}

/* The next reply on the client socket (waits up to a second). */
static int recv_udp(struct harness *h, uint8_t *reply, size_t size)
{
	struct pollfd poller = {.fd = h->udp_fd, .events = POLLIN};

	if (poll(&poller, 1, 1000) != 1)
		return -1;
	return (int)recv(h->udp_fd, reply, size, MSG_DONTWAIT);
}

static int rcode_of(const uint8_t *reply)
{
	return reply[3] & 0x0f;
}

static uint16_t id_of(const uint8_t *reply)
{
	return (uint16_t)(reply[0] << 8 | reply[1]);
}

static void load_policy(struct policy *policy, const char *json)
{
	char err[256] = "";

	if (policy_parse(json, strlen(json), policy, err, sizeof(err)))
		fail_msg("policy: %s", err);
}

static int setup(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct resolver_options options = {.servers = {"127.0.0.1:1"}, .server_count = 1};
	socklen_t length = sizeof(h->server);

	assert_non_null(h);
	names_config_default(&options.names);
	/* The name cache lives in a real resolver; no query ever leaves (names are cached). */
	assert_int_equal(resolver_open(&options, -1, &h->resolver), 0);
	h->fake.table = resolver_names(h->resolver);
	load_policy(&h->fake.policy, "{\"network_mode\": \"allowlist\", \"allowed_hosts\": "
				     "[\"allowed.example\", \"*.wild.example\"]}");
	h->fake.policy_known = true;
	h->fake.settled = true;
	h->fake.cache[0] = "192.0.2.1";
	h->fake.cache[1] = "192.0.2.2";
	h->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	assert_true(h->epoll_fd >= 0);
	h->context = (struct responder_context){.epoll_fd = h->epoll_fd,
						.rate_per_second = 1000,
						.resolver = h->resolver,
						.ops = &fake_ops,
						.ops_data = &h->fake};
	assert_int_equal(responder_open(&h->context, &h->fake, -1, 0, &h->responder), 0);
	assert_true(responder_port(h->responder) > 0);
	h->udp_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(h->udp_fd >= 0);
	h->server.sin_family = AF_INET;
	h->server.sin_port = htons(responder_port(h->responder));
	h->server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* Bound now, so that the fake can look for a reply before one was asked for. */
	assert_int_equal(connect(h->udp_fd, (struct sockaddr *)&h->server, length), 0);
	h->fake.client_fd = h->udp_fd;
	*state = h;
	return 0;
}

static int teardown(void **state)
{
	struct harness *h = *state;

	responder_close(h->responder);
	close(h->udp_fd);
	close(h->epoll_fd);
	policy_free(&h->fake.policy);
	resolver_close(h->resolver);
	free(h);
	return 0;
}

static void test_allowed_learns_then_answers(void **state)
{
	struct harness *h = *state;
	struct ares_addrttl addrs[MAX_ADDRS];
	int naddrs = MAX_ADDRS, length;
	uint8_t reply[DNS_MAX_UDP_REPLY];
	char text[INET_ADDRSTRLEN];
	struct msg query;

	make_query(&query, 0x4242, "Allowed.Example", DNS_TYPE_A);
	send_udp(h, query.b, query.n);
	length = recv_udp(h, reply, sizeof(reply));
	assert_true(length > DNS_HEADER_SIZE);
	assert_int_equal(id_of(reply), 0x4242);
	assert_int_equal(rcode_of(reply), DNS_RCODE_NOERROR);
	/* Learned (normalised) and programmed before the reply left. */
	assert_int_equal(h->fake.learn_calls, 1);
	assert_string_equal(h->fake.learned, "allowed.example");
	assert_false(h->fake.reply_before_learn);
	assert_true(h->fake.refresh_calls >= 1);
	assert_false(h->fake.reply_before_refresh);
	assert_int_equal(h->fake.refused_calls, 0);
	assert_int_equal(ares_parse_a_reply(reply, length, NULL, addrs, &naddrs), ARES_SUCCESS);
	assert_int_equal(naddrs, 2);
	inet_ntop(AF_INET, &addrs[0].ipaddr, text, sizeof(text));
	assert_string_equal(text, "192.0.2.1");
	assert_true(addrs[0].ttl > 0 && addrs[0].ttl <= 60);
}

static void test_answer_holds_only_programmed(void **state)
{
	struct harness *h = *state;
	struct ares_addrttl addrs[MAX_ADDRS];
	int naddrs = MAX_ADDRS, length;
	uint8_t reply[DNS_MAX_UDP_REPLY];
	char text[INET_ADDRSTRLEN];
	struct msg query;

	/* The owner's maps took only one of the two addresses the name has. */
	h->fake.program_first_only = true;
	make_query(&query, 7, "x.wild.example", DNS_TYPE_A);
	send_udp(h, query.b, query.n);
	length = recv_udp(h, reply, sizeof(reply));
	assert_true(length > DNS_HEADER_SIZE);
	assert_int_equal(ares_parse_a_reply(reply, length, NULL, addrs, &naddrs), ARES_SUCCESS);
	assert_int_equal(naddrs, 1);
	inet_ntop(AF_INET, &addrs[0].ipaddr, text, sizeof(text));
	assert_string_equal(text, "192.0.2.1");
}

static void test_denied_is_refused(void **state)
{
	struct harness *h = *state;
	uint8_t reply[DNS_MAX_UDP_REPLY];
	struct msg query;
	json_t *status;

	make_query(&query, 9, "evil.example", DNS_TYPE_AAAA);
	send_udp(h, query.b, query.n);
	assert_true(recv_udp(h, reply, sizeof(reply)) >= DNS_HEADER_SIZE);
	assert_int_equal(id_of(reply), 9);
	assert_int_equal(rcode_of(reply), DNS_RCODE_REFUSED);
	assert_int_equal(reply[7], 0); /* no answers */
	assert_int_equal(h->fake.refused_calls, 1);
	assert_string_equal(h->fake.refused_name, "evil.example");
	assert_int_equal(h->fake.refused_qtype, DNS_TYPE_AAAA);
	assert_int_equal(h->fake.learn_calls, 0);
	status = responder_status(h->responder);
	assert_int_equal(
		json_integer_value(json_object_get(json_object_get(status, "queries"), "refused")),
		1);
	json_decref(status);
}

/* verify's liveness name: NXDOMAIN and counted, whatever the policy, with no refusal. */
static void test_liveness_answers(void **state)
{
	struct harness *h = *state;
	uint8_t reply[DNS_MAX_UDP_REPLY];
	struct msg query;

	h->fake.policy_known = false; /* even a policy that allows nothing */
	make_query(&query, 77, RESPONDER_LIVENESS_NAME, DNS_TYPE_A);
	send_udp(h, query.b, query.n);
	assert_true(recv_udp(h, reply, sizeof(reply)) >= DNS_HEADER_SIZE);
	assert_int_equal(id_of(reply), 77);
	assert_int_equal(rcode_of(reply), DNS_RCODE_NXDOMAIN);
	assert_int_equal(h->fake.refused_calls, 0);
	assert_int_equal(h->fake.learn_calls, 0);
	assert_int_equal(responder_liveness(h->responder), 1);
	/* The namespace it was opened in is the one it listens in. */
	assert_true(responder_netns_listening(h->responder, responder_netns_key(h->responder)));
}

static void test_unknown_policy_refuses_all(void **state)
{
	struct harness *h = *state;
	uint8_t reply[DNS_MAX_UDP_REPLY];
	struct msg query;

	h->fake.policy_known = false;
	make_query(&query, 10, "allowed.example", DNS_TYPE_A);
	send_udp(h, query.b, query.n);
	assert_true(recv_udp(h, reply, sizeof(reply)) >= DNS_HEADER_SIZE);
	assert_int_equal(rcode_of(reply), DNS_RCODE_REFUSED);
	assert_int_equal(h->fake.refused_calls, 1);
	assert_int_equal(h->fake.learn_calls, 0);
}

static void test_other_type_is_nodata(void **state)
{
	struct harness *h = *state;
	uint8_t reply[DNS_MAX_UDP_REPLY];
	struct msg query;

	make_query(&query, 11, "allowed.example", TYPE_TXT);
	send_udp(h, query.b, query.n);
	assert_true(recv_udp(h, reply, sizeof(reply)) >= DNS_HEADER_SIZE);
	assert_int_equal(rcode_of(reply), DNS_RCODE_NOERROR);
	assert_int_equal(reply[7], 0);
	assert_int_equal(h->fake.learn_calls, 0);
	assert_int_equal(h->fake.refused_calls, 0);
}

/*
 * HTTPS and SVCB of an allowed name (a wildcard's too): NOERROR, with no
 * answer, authority or additional record (NODATA), the question echoed: no
 * ECH configuration reaches the client, whose ClientHello then shows its real
 * server_name (issue 20), and no address hint the filter has not programmed.
 * Nothing is learned or resolved for them.
 */
static void test_https_svcb_nodata(void **state)
{
	static const uint16_t types[] = {TYPE_HTTPS, TYPE_SVCB};
	static const char *const names[] = {"allowed.example", "api.wild.example"};
	struct harness *h = *state;
	uint8_t reply[DNS_MAX_UDP_REPLY];
	struct msg query;
	int n;

	for (int i = 0; i < 4; i++) {
		make_query(&query, (uint16_t)(20 + i), names[i / 2], types[i % 2]);
		send_udp(h, query.b, query.n);
		n = recv_udp(h, reply, sizeof(reply));
		assert_int_equal(n, query.n); /* the header and the question: nothing more */
		assert_int_equal(id_of(reply), 20 + i);
		assert_true(reply[2] & 0x80); /* a response */
		assert_int_equal(rcode_of(reply), DNS_RCODE_NOERROR);
		assert_int_equal(reply[4] << 8 | reply[5], 1);			/* QDCOUNT */
		assert_int_equal(reply[6] | reply[7] | reply[8] | reply[9], 0); /* AN, NS */
		assert_int_equal(reply[10] | reply[11], 0);			/* AR */
		assert_memory_equal(reply + DNS_HEADER_SIZE, query.b + DNS_HEADER_SIZE,
				    (size_t)n - DNS_HEADER_SIZE);
	}
	assert_int_equal(h->fake.learn_calls, 0);
	assert_int_equal(h->fake.refused_calls, 0);
	/* A denied name's HTTPS is refused, like its A. */
	make_query(&query, 30, "evil.example", TYPE_HTTPS);
	send_udp(h, query.b, query.n);
	assert_true(recv_udp(h, reply, sizeof(reply)) >= DNS_HEADER_SIZE);
	assert_int_equal(rcode_of(reply), DNS_RCODE_REFUSED);
	assert_int_equal(h->fake.refused_qtype, TYPE_HTTPS);
}

/* Until the policy's names have answered, an allowed query waits; then it is answered. */
static void test_waits_until_settled(void **state)
{
	struct harness *h = *state;
	uint8_t reply[DNS_MAX_UDP_REPLY];
	struct msg query;

	h->fake.settled = false;
	make_query(&query, 12, "allowed.example", DNS_TYPE_A);
	send_udp(h, query.b, query.n);
	assert_int_equal(h->fake.learn_calls, 1);
	assert_true(responder_has_pending(h->responder));
	responder_poll(h->responder);
	assert_false(reply_waiting(h->udp_fd));
	h->fake.settled = true;
	responder_poll(h->responder);
	assert_false(responder_has_pending(h->responder));
	assert_true(recv_udp(h, reply, sizeof(reply)) > DNS_HEADER_SIZE);
	assert_int_equal(id_of(reply), 12);
	assert_int_equal(rcode_of(reply), DNS_RCODE_NOERROR);
	assert_int_equal(reply[7], 2);
	assert_false(h->fake.reply_before_refresh);
}

static void test_malformed(void **state)
{
	struct harness *h = *state;
	uint8_t reply[DNS_MAX_UDP_REPLY], garbage[300];
	struct msg query;

	/* Shorter than a header: nothing to answer to, nothing said. */
	send_udp(h, "\x01\x02\x03", 3);
	/* A header without a question: FORMERR. */
	memset(garbage, 0, DNS_HEADER_SIZE);
	garbage[1] = 21;
	send_udp(h, garbage, DNS_HEADER_SIZE);
	assert_true(recv_udp(h, reply, sizeof(reply)) >= DNS_HEADER_SIZE);
	assert_int_equal(id_of(reply), 21);
	assert_int_equal(rcode_of(reply), DNS_RCODE_FORMERR);
	/* A question whose name runs past the end of the message. */
	make_query(&query, 22, "allowed.example", DNS_TYPE_A);
	query.b[DNS_HEADER_SIZE] = 63;
	send_udp(h, query.b, DNS_HEADER_SIZE + 5);
	/* Random bytes (a fixed seed: the same every run). */
	srandom(1234);
	for (int n = 0; n < 200; n++) {
		size_t length = (size_t)(random() % sizeof(garbage)) + 1;

		for (size_t i = 0; i < length; i++)
			garbage[i] = (uint8_t)random();
		send(h->udp_fd, garbage, length, 0);
		pump(h, 0);
	}
	while (reply_waiting(h->udp_fd))
		recv(h->udp_fd, reply, sizeof(reply), MSG_DONTWAIT);
	/* Nothing was learned from any of it, and the responder still answers. */
	assert_int_equal(h->fake.learn_calls, 0);
	make_query(&query, 23, "allowed.example", DNS_TYPE_A);
	send_udp(h, query.b, query.n);
	assert_true(recv_udp(h, reply, sizeof(reply)) > DNS_HEADER_SIZE);
	assert_int_equal(id_of(reply), 23);
	assert_int_equal(rcode_of(reply), DNS_RCODE_NOERROR);
}

/* Reads exactly size bytes from a stream socket (waits up to a second for each part). */
static void recv_exact(int fd, uint8_t *out, size_t size)
{
	struct pollfd poller = {.fd = fd, .events = POLLIN};
	size_t got = 0;

	while (got < size) {
		ssize_t n;

		assert_int_equal(poll(&poller, 1, 1000), 1);
		n = recv(fd, out + got, size - got, MSG_DONTWAIT);
		assert_true(n > 0);
		got += (size_t)n;
	}
}

/* One DNS-over-TCP message: its 2-byte length, then the message. */
static size_t recv_framed(int fd, uint8_t *out, size_t size)
{
	uint8_t prefix[2];
	size_t length;

	recv_exact(fd, prefix, 2);
	length = (size_t)(prefix[0] << 8 | prefix[1]);
	assert_true(length >= DNS_HEADER_SIZE && length <= size);
	recv_exact(fd, out, length);
	return length;
}

/* TCP: two pipelined queries in one write, two framed replies. */
static void test_tcp_pipelined(void **state)
{
	struct harness *h = *state;
	uint8_t buffer[2 * (2 + Q_MAX)], reply[DNS_MAX_UDP_REPLY];
	struct msg query;
	size_t used = 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&h->server, sizeof(h->server)), 0);
	pump(h, 1000); /* the accept */
	for (uint16_t id = 31; id <= 32; id++) {
		make_query(&query, id, id == 31 ? "allowed.example" : "evil.example", DNS_TYPE_A);
		buffer[used++] = (uint8_t)(query.n >> 8);
		buffer[used++] = (uint8_t)query.n;
		memcpy(buffer + used, query.b, query.n);
		used += query.n;
	}
	assert_int_equal(send(fd, buffer, used, 0), (ssize_t)used);
	pump(h, 1000);
	recv_framed(fd, reply, sizeof(reply));
	assert_int_equal(id_of(reply), 31);
	assert_int_equal(rcode_of(reply), DNS_RCODE_NOERROR);
	assert_int_equal(reply[7], 2);
	recv_framed(fd, reply, sizeof(reply));
	assert_int_equal(id_of(reply), 32);
	assert_int_equal(rcode_of(reply), DNS_RCODE_REFUSED);
	close(fd);
}

static void test_status_lists_learned(void **state)
{
	struct harness *h = *state;
	uint8_t reply[DNS_MAX_UDP_REPLY];
	struct msg query;
	json_t *status, *learned;

	make_query(&query, 41, "allowed.example", DNS_TYPE_A);
	send_udp(h, query.b, query.n);
	assert_true(recv_udp(h, reply, sizeof(reply)) > 0);
	status = responder_status(h->responder);
	assert_int_equal(json_integer_value(json_object_get(status, "port")),
			 responder_port(h->responder));
	learned = json_object_get(status, "learned");
	assert_int_equal(json_array_size(learned), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(learned, 0), "name")),
			    "allowed.example");
	assert_int_equal(json_array_size(json_object_get(json_array_get(learned, 0), "addresses")),
			 2);
	assert_int_equal(
		json_integer_value(json_object_get(json_object_get(status, "queries"), "answered")),
		1);
	json_decref(status);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_allowed_learns_then_answers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_answer_holds_only_programmed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_denied_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_policy_refuses_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_liveness_answers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_type_is_nodata, setup, teardown),
		cmocka_unit_test_setup_teardown(test_https_svcb_nodata, setup, teardown),
		cmocka_unit_test_setup_teardown(test_waits_until_settled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_pipelined, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status_lists_learned, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
