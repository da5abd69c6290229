// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bfbench: the load generator and the servers of `make bench`.
 *
 *   bfbench serve PORT...
 *       accepts TCP connections on [::]:PORT (dual stack) and closes them at
 *       once; two threads. Runs until SIGTERM.
 *   bfbench httpd PORT
 *       a minimal HTTP/1.1 server: GET /bytes/N answers N zero bytes
 *       (Content-Length, keep-alive off). One thread per connection.
 *   bfbench connect --target ADDR:PORT [--proxy ADDR:PORT] [--seconds S]
 *                   [--max N] [--threads T] [--concurrency C]
 *       TCP connect + close, as fast as it can, with C connections in flight
 *       (split over T threads, non-blocking, epoll). The close is abortive
 *       (SO_LINGER 0, an RST) so that TIME_WAIT does not exhaust the ports at
 *       tens of thousands of connections per second. With --proxy, each
 *       connection goes to the proxy and asks "CONNECT ADDR:PORT"; it counts
 *       once the proxy answers 200 (the proxy has connected to the target).
 *       Prints one JSON object: connections, errors, seconds, rate.
 *   bfbench verdicts --allow ADDR:PORT,... --deny ADDR:PORT,... [--seconds S]
 *                    [--max N] [--slow-ms MS]
 *       blocking connects in a loop, alternating over the allowed and the
 *       denied targets, until S seconds, N connects or SIGTERM. A connect to
 *       an allowed target must succeed, one to a denied target must fail with
 *       EPERM. Prints the counts, the wrong verdicts and the connects to an
 *       allowed target slower than MS (a SYN dropped by a packet filter is
 *       retransmitted after 1 s).
 *
 *   bfbench dns --server ADDR:PORT --names FILE [--seconds S] [--rate QPS]
 *               [--outstanding N] [--timeout-ms MS] [--max N]
 *       UDP DNS queries (type A, RD, no EDNS) for the names of FILE (one a
 *       line, in turn), from one socket: closed loop with N queries in flight
 *       (the default, N = 1), or paced at QPS queries a second (an open loop;
 *       N caps the queries in flight). A query is answered when a reply with
 *       its ID comes back with NOERROR and an answer; a reply without one is
 *       "bad"; no reply within MS (1000) is a timeout. Prints the counts, the
 *       rate of answers and the latency percentiles of the answered queries
 *       (microseconds, send to receive).
 *   bfbench deny --target ADDR:PORT [--proto udp|tcp] [--seconds S] [--max N]
 *       connects to a denied address in a tight loop: UDP, connect() again and
 *       again on one socket (no packet is sent); TCP, socket() + connect() +
 *       close() each time. Every attempt must fail with EPERM. Prints the
 *       attempts per second.
 *
 * Exit status: 0 when the run worked (whatever the figures), 1 when it did
 * not (no connection at all, errors, bad usage).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void install_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *message)
{
	fprintf(stderr, "bfbench: %s\n", message);
	exit(1);
}

struct endpoint {
	struct sockaddr_storage addr;
	socklen_t length;
	char text[80];
};

/* "198.18.0.2:9000" or "[fd00::2]:9000". */
static int endpoint_parse(const char *text, struct endpoint *ep)
{
	char host[64];
	const char *colon;
	long port;

	memset(ep, 0, sizeof(*ep));
	snprintf(ep->text, sizeof(ep->text), "%s", text);
	if (text[0] == '[') {
		const char *close = strchr(text, ']');

		if (!close || close[1] != ':' || (size_t)(close - text - 1) >= sizeof(host))
			return -1;
		memcpy(host, text + 1, (size_t)(close - text - 1));
		host[close - text - 1] = 0;
		colon = close + 1;
	} else {
		colon = strrchr(text, ':');
		if (!colon || (size_t)(colon - text) >= sizeof(host))
			return -1;
		memcpy(host, text, (size_t)(colon - text));
		host[colon - text] = 0;
	}
	port = strtol(colon + 1, NULL, 10);
	if (port <= 0 || port > 65535)
		return -1;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ep->addr;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ep->addr;

	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		ep->length = sizeof(*in4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		ep->length = sizeof(*in6);
		return 0;
	}
	return -1;
}

/* ---- serve: accept and close ---- */

#define MAX_LISTENERS 16

static int listen_on(int port, int backlog)
{
	struct sockaddr_in6 addr = {.sin6_family = AF_INET6,
				    .sin6_port = htons((uint16_t)port),
				    .sin6_addr = IN6ADDR_ANY_INIT};
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int zero = 0, one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || listen(fd, backlog)) {
		close(fd);
		return -1;
	}
	return fd;
}

struct serve_ctx {
	int listeners[MAX_LISTENERS];
	int count;
};

static void *serve_thread(void *arg)
{
	struct serve_ctx *ctx = arg;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event events[16];

	for (int i = 0; i < ctx->count; i++) {
		struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE,
					 .data.fd = ctx->listeners[i]};

		epoll_ctl(ep, EPOLL_CTL_ADD, ctx->listeners[i], &ev);
	}
	while (!stop_requested) {
		int n = epoll_wait(ep, events, 16, 200);

		for (int i = 0; i < n; i++) {
			for (int k = 0; k < 64; k++) {
				int fd = accept4(events[i].data.fd, NULL, NULL, SOCK_CLOEXEC);

				if (fd < 0)
					break;
				close(fd);
			}
		}
	}
	return NULL;
}

static int cmd_serve(int argc, char **argv)
{
	static struct serve_ctx ctx;
	pthread_t threads[2];

	for (int i = 0; i < argc && ctx.count < MAX_LISTENERS; i++) {
		int fd = listen_on(atoi(argv[i]), 4096);

		if (fd < 0)
			die("serve: cannot listen");
		fcntl(fd, F_SETFL, O_NONBLOCK);
		ctx.listeners[ctx.count++] = fd;
	}
	if (!ctx.count)
		die("serve: no port");
	install_signals();
	for (int i = 0; i < 2; i++)
		pthread_create(&threads[i], NULL, serve_thread, &ctx);
	for (int i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	return 0;
}

/* ---- httpd: GET /bytes/N ---- */

static char zeros[1 << 20];

static void *http_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char request[4096];
	size_t used = 0;
	unsigned long long size = 0;

	while (used < sizeof(request) - 1) {
		ssize_t n = read(fd, request + used, sizeof(request) - 1 - used);

		if (n <= 0)
			goto out;
		used += (size_t)n;
		request[used] = 0;
		if (strstr(request, "\r\n\r\n"))
			break;
	}
	const char *path = strstr(request, "/bytes/");

	if (!path) {
		const char *reply =
			"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

		if (write(fd, reply, strlen(reply)) < 0)
			goto out;
		goto out;
	}
	size = strtoull(path + 7, NULL, 10);
	char header[256];
	int length = snprintf(header, sizeof(header),
			      "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
			      "Content-Length: %llu\r\nConnection: close\r\n\r\n",
			      size);

	if (write(fd, header, (size_t)length) != length)
		goto out;
	while (size > 0) {
		size_t chunk = size < sizeof(zeros) ? (size_t)size : sizeof(zeros);
		ssize_t n = write(fd, zeros, chunk);

		if (n <= 0)
			break;
		size -= (unsigned long long)n;
	}
out:
	close(fd);
	return NULL;
}

static int cmd_httpd(int argc, char **argv)
{
	int fd;

	if (argc < 1)
		die("httpd: PORT");
	fd = listen_on(atoi(argv[0]), 128);
	if (fd < 0)
		die("httpd: cannot listen");
	install_signals();
	while (!stop_requested) {
		int conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		pthread_t thread;

		if (conn < 0)
			continue;
		if (pthread_create(&thread, NULL, http_conn, (void *)(intptr_t)conn))
			close(conn);
		else
			pthread_detach(thread);
	}
	return 0;
}

/* ---- connect: connect + close rate ---- */

struct connect_opts {
	struct endpoint target;
	struct endpoint proxy;
	bool use_proxy;
	double seconds;
	long max;
	int threads;
	int concurrency;
	double deadline;
};

static struct connect_opts copts;
static atomic_long total_started;
static atomic_long total_done;
static atomic_long total_errors;
static atomic_int first_errno;

enum conn_state { CONNECTING, SENT_CONNECT };

struct conn {
	int fd;
	enum conn_state state;
	size_t got;
	char reply[512];
};

static void note_error(int err)
{
	int expected = 0;

	atomic_fetch_add(&total_errors, 1);
	atomic_compare_exchange_strong(&first_errno, &expected, err ? err : EPROTO);
}

/* Starts a new connection in slot c; false when the budget is spent. */
static bool conn_start(int ep, struct conn *c)
{
	const struct endpoint *to = copts.use_proxy ? &copts.proxy : &copts.target;
	struct linger linger = {.l_onoff = 1, .l_linger = 0};

	for (;;) {
		if (stop_requested || now_seconds() >= copts.deadline)
			return false;
		if (atomic_fetch_add(&total_started, 1) >= copts.max)
			return false;
		c->fd = socket(to->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c->fd < 0) {
			note_error(errno);
			continue;
		}
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &linger, sizeof(linger));
		c->state = CONNECTING;
		c->got = 0;
		if (connect(c->fd, (const struct sockaddr *)&to->addr, to->length) &&
		    errno != EINPROGRESS) {
			note_error(errno);
			close(c->fd);
			c->fd = -1;
			continue;
		}
		struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = c};

		epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
		return true;
	}
}

static void conn_finish(int ep, struct conn *c, bool ok, int err)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	if (ok)
		atomic_fetch_add(&total_done, 1);
	else
		note_error(err);
}

static void *connect_thread(void *arg)
{
	int slots = (int)(intptr_t)arg;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct conn *conns = calloc((size_t)slots, sizeof(*conns));
	struct epoll_event events[64];
	int active = 0;
	char request[256];
	int request_length =
		snprintf(request, sizeof(request), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n",
			 copts.target.text, copts.target.text);

	for (int i = 0; i < slots; i++) {
		conns[i].fd = -1;
		if (conn_start(ep, &conns[i]))
			active++;
	}
	while (active > 0) {
		int n = epoll_wait(ep, events, 64, 100);

		if (n <= 0 && (stop_requested || now_seconds() >= copts.deadline + 5))
			break; /* connections stuck beyond the deadline: give up on them */
		for (int i = 0; i < n; i++) {
			struct conn *c = events[i].data.ptr;

			if (c->state == CONNECTING) {
				int err = 0;
				socklen_t len = sizeof(err);

				getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
				if (err) {
					conn_finish(ep, c, false, err);
				} else if (!copts.use_proxy) {
					conn_finish(ep, c, true, 0);
				} else if (write(c->fd, request, (size_t)request_length) !=
					   request_length) {
					conn_finish(ep, c, false, errno);
				} else {
					struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};

					c->state = SENT_CONNECT;
					epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
					continue;
				}
			} else {
				ssize_t r = read(c->fd, c->reply + c->got,
						 sizeof(c->reply) - 1 - c->got);

				if (r < 0 && errno == EAGAIN)
					continue;
				if (r <= 0) {
					conn_finish(ep, c, false, r < 0 ? errno : ECONNRESET);
				} else {
					c->got += (size_t)r;
					c->reply[c->got] = 0;
					if (!strstr(c->reply, "\r\n\r\n") &&
					    c->got < sizeof(c->reply) - 1)
						continue;
					conn_finish(ep, c,
						    !strncmp(c->reply, "HTTP/1.", 7) &&
							    !strncmp(c->reply + 8, " 200", 4),
						    EACCES);
				}
			}
			if (!conn_start(ep, c))
				active--;
		}
	}
	for (int i = 0; i < slots; i++)
		if (conns[i].fd >= 0)
			close(conns[i].fd);
	free(conns);
	close(ep);
	return NULL;
}

static int cmd_connect(int argc, char **argv)
{
	pthread_t threads[64];
	bool have_target = false;

	copts.seconds = 2;
	copts.max = 1000000000L;
	copts.threads = 2;
	copts.concurrency = 16;
	for (int i = 0; i < argc; i++) {
		const char *value = i + 1 < argc ? argv[i + 1] : NULL;

		if (!value)
			die("connect: an option lacks its value");
		if (!strcmp(argv[i], "--target")) {
			if (endpoint_parse(value, &copts.target))
				die("connect: bad --target");
			have_target = true;
		} else if (!strcmp(argv[i], "--proxy")) {
			if (endpoint_parse(value, &copts.proxy))
				die("connect: bad --proxy");
			copts.use_proxy = true;
		} else if (!strcmp(argv[i], "--seconds")) {
			copts.seconds = atof(value);
		} else if (!strcmp(argv[i], "--max")) {
			copts.max = atol(value);
		} else if (!strcmp(argv[i], "--threads")) {
			copts.threads = atoi(value);
		} else if (!strcmp(argv[i], "--concurrency")) {
			copts.concurrency = atoi(value);
		} else {
			die("connect: unknown option");
		}
		i++;
	}
	if (!have_target || copts.threads < 1 || copts.threads > 64 ||
	    copts.concurrency < copts.threads || copts.seconds <= 0)
		die("connect: usage: --target ADDR:PORT [--proxy ADDR:PORT] [--seconds S] [--max "
		    "N] "
		    "[--threads T] [--concurrency C]");
	install_signals();
	double start = now_seconds();

	copts.deadline = start + copts.seconds;
	for (int i = 0; i < copts.threads; i++) {
		int slots = copts.concurrency / copts.threads +
			    (i < copts.concurrency % copts.threads ? 1 : 0);

		pthread_create(&threads[i], NULL, connect_thread, (void *)(intptr_t)slots);
	}
	for (int i = 0; i < copts.threads; i++)
		pthread_join(threads[i], NULL);
	double elapsed = now_seconds() - start;
	long done = atomic_load(&total_done), errors = atomic_load(&total_errors);

	printf("{\"connections\":%ld,\"errors\":%ld,\"first_error\":\"%s\",\"seconds\":%.4f,"
	       "\"rate\":%.1f}\n",
	       done, errors, errors ? strerror(atomic_load(&first_errno)) : "", elapsed,
	       elapsed > 0 ? done / elapsed : 0.0);
	/* A few errors under load are tolerated; a broken path is not. */
	return done > 0 && errors * 100 <= done ? 0 : 1;
}

/* ---- verdicts: allowed must connect, denied must get EPERM ---- */

#define MAX_TARGETS 16

static int parse_list(char *list, struct endpoint *eps)
{
	int count = 0;

	for (char *save = NULL, *item = strtok_r(list, ",", &save); item && count < MAX_TARGETS;
	     item = strtok_r(NULL, ",", &save))
		if (endpoint_parse(item, &eps[count++]))
			die("verdicts: bad target");
	return count;
}

static int cmd_verdicts(int argc, char **argv)
{
	struct endpoint allow[MAX_TARGETS], deny[MAX_TARGETS];
	int n_allow = 0, n_deny = 0;
	double seconds = 10, slow_ms = 200;
	long max = 1000000000L;
	long allowed_ok = 0, allowed_wrong = 0, allowed_slow = 0, denied_ok = 0, denied_wrong = 0,
	     denied_other = 0;
	double allowed_max_ms = 0;
	char first_wrong[160] = "";

	for (int i = 0; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--allow"))
			n_allow = parse_list(argv[i + 1], allow);
		else if (!strcmp(argv[i], "--deny"))
			n_deny = parse_list(argv[i + 1], deny);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--max"))
			max = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--slow-ms"))
			slow_ms = atof(argv[i + 1]);
		else
			die("verdicts: unknown option");
	}
	if (!n_allow || !n_deny)
		die("verdicts: usage: --allow ADDR:PORT,... --deny ADDR:PORT,... [--seconds S] "
		    "[--max N]");
	install_signals();
	double deadline = now_seconds() + seconds;
	struct linger linger = {.l_onoff = 1, .l_linger = 0};
	struct timeval timeout = {.tv_sec = 3};

	for (long k = 0; k < max && !stop_requested && now_seconds() < deadline; k++) {
		bool want_allow = (k % 2) == 0;
		const struct endpoint *to =
			want_allow ? &allow[(k / 2) % n_allow] : &deny[(k / 2) % n_deny];
		int fd = socket(to->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0) {
			/* sock_create refusing a TCP socket is a wrong verdict too */
			if (want_allow)
				allowed_wrong++;
			else
				denied_other++;
			if (!first_wrong[0])
				snprintf(first_wrong, sizeof(first_wrong), "socket() for %s: %s",
					 to->text, strerror(errno));
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, sizeof(linger));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
		double t0 = now_seconds();
		int rc = connect(fd, (const struct sockaddr *)&to->addr, to->length);
		int err = rc ? errno : 0;
		double ms = (now_seconds() - t0) * 1000;

		close(fd);
		if (rc && err == EINTR && stop_requested)
			break; /* interrupted by the end of the run: no verdict */
		if (want_allow) {
			if (ms > allowed_max_ms)
				allowed_max_ms = ms;
			if (rc == 0) {
				allowed_ok++;
				if (ms > slow_ms)
					allowed_slow++;
			} else {
				allowed_wrong++;
				if (!first_wrong[0])
					snprintf(first_wrong, sizeof(first_wrong),
						 "allowed %s refused: %s", to->text, strerror(err));
			}
		} else if (rc == 0) {
			denied_wrong++;
			if (!first_wrong[0])
				snprintf(first_wrong, sizeof(first_wrong), "denied %s connected",
					 to->text);
		} else if (err == EPERM) {
			denied_ok++;
		} else {
			denied_other++;
			if (!first_wrong[0])
				snprintf(first_wrong, sizeof(first_wrong),
					 "denied %s: %s (not EPERM)", to->text, strerror(err));
		}
	}
	printf("{\"allowed_ok\":%ld,\"allowed_refused\":%ld,\"allowed_slow\":%ld,"
	       "\"allowed_max_ms\":%.2f,\"denied_eperm\":%ld,\"denied_connected\":%ld,"
	       "\"denied_other_error\":%ld,\"wrong_verdicts\":%ld,\"first_wrong\":\"%s\"}\n",
	       allowed_ok, allowed_wrong, allowed_slow, allowed_max_ms, denied_ok, denied_wrong,
	       denied_other, allowed_wrong + denied_wrong, first_wrong);
	return allowed_ok + denied_ok > 0 ? 0 : 1;
}

/* ---- dns: UDP DNS queries, closed loop or paced, per-query latency ---- */

#define DNS_MAX_NAMES 65536
#define DNS_FIFO (1u << 18)

struct dns_sent {
	uint16_t id;
	uint32_t seq;
	double at;
};

struct dns_slot {
	bool used;
	uint32_t seq;
	double at;
};

static int latency_compare(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

static double latency_pct(const float *sorted, size_t n, double q)
{
	if (!n)
		return 0;
	size_t i = (size_t)(q / 100 * (double)(n - 1) + 0.5);

	return sorted[i < n ? i : n - 1];
}

/* "n0001.bench.test" as a question: labels, type A, class IN. */
static int dns_question(const char *name, unsigned char *out, size_t size)
{
	size_t used = 0;
	const char *label = name;

	while (*label) {
		const char *dot = strchr(label, '.');
		size_t length = dot ? (size_t)(dot - label) : strlen(label);

		if (length == 0 || length > 63 || used + length + 1 >= size)
			return -1;
		out[used++] = (unsigned char)length;
		memcpy(out + used, label, length);
		used += length;
		label += length + (dot ? 1 : 0);
	}
	if (used + 5 > size)
		return -1;
	out[used++] = 0;
	out[used++] = 0, out[used++] = 1; /* A */
	out[used++] = 0, out[used++] = 1; /* IN */
	return (int)used;
}

static int cmd_dns(int argc, char **argv)
{
	struct endpoint server;
	bool have_server = false;
	const char *names_path = NULL;
	double seconds = 2, rate = 0, timeout = 1.0;
	long max = 1000000000L;
	int outstanding_max = 1;

	for (int i = 0; i + 1 < argc; i += 2) {
		const char *value = argv[i + 1];

		if (!strcmp(argv[i], "--server")) {
			if (endpoint_parse(value, &server))
				die("dns: bad --server");
			have_server = true;
		} else if (!strcmp(argv[i], "--names")) {
			names_path = value;
		} else if (!strcmp(argv[i], "--seconds")) {
			seconds = atof(value);
		} else if (!strcmp(argv[i], "--rate")) {
			rate = atof(value);
		} else if (!strcmp(argv[i], "--outstanding")) {
			outstanding_max = atoi(value);
		} else if (!strcmp(argv[i], "--timeout-ms")) {
			timeout = atof(value) / 1000;
		} else if (!strcmp(argv[i], "--max")) {
			max = atol(value);
		} else {
			die("dns: unknown option");
		}
	}
	if (!have_server || !names_path || seconds <= 0 || rate < 0 || timeout <= 0 ||
	    outstanding_max < 1 || outstanding_max > 4096)
		die("dns: usage: --server ADDR:PORT --names FILE [--seconds S] [--rate QPS] "
		    "[--outstanding N] [--timeout-ms MS] [--max N]");

	/* the questions, one per name */
	static unsigned char questions[DNS_MAX_NAMES][260];
	static int question_length[DNS_MAX_NAMES];
	int n_names = 0;
	char line[300];
	FILE *f = fopen(names_path, "r");

	if (!f)
		die("dns: cannot read --names");
	while (n_names < DNS_MAX_NAMES && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n \t")] = 0;
		if (!line[0])
			continue;
		question_length[n_names] = dns_question(line, questions[n_names], 260);
		if (question_length[n_names] < 0)
			die("dns: bad name in --names");
		n_names++;
	}
	fclose(f);
	if (!n_names)
		die("dns: no names");

	int fd = socket(server.addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int buffer = 1 << 20;

	if (fd < 0)
		die("dns: socket");
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof(buffer));

	static struct dns_slot slots[65536];
	struct dns_sent *fifo = calloc(DNS_FIFO, sizeof(*fifo));
	size_t fifo_head = 0, fifo_tail = 0, lat_n = 0, lat_cap = 1 << 16;
	float *lat = malloc(lat_cap * sizeof(*lat));
	long sent = 0, answered = 0, bad = 0, timeouts = 0, send_errors = 0, late = 0;
	int first_rcode = -1, first_send_errno = 0, outstanding = 0;
	uint32_t seq = 0;
	uint16_t next_id = (uint16_t)(getpid() * 7919);
	unsigned char message[512], reply[1500];

	if (!fifo || !lat)
		die("dns: out of memory");
	install_signals();
	double start = now_seconds(), deadline = start + seconds, next_send = start;

	for (;;) {
		double now = now_seconds();
		bool sending = !stop_requested && now < deadline && sent < max;

		/* the oldest queries first: answered ones leave, expired ones time out */
		while (fifo_head != fifo_tail) {
			struct dns_sent *s = &fifo[fifo_head % DNS_FIFO];
			struct dns_slot *slot = &slots[s->id];

			if (slot->used && slot->seq == s->seq) {
				if (now - s->at < timeout)
					break;
				slot->used = false;
				outstanding--;
				timeouts++;
			}
			fifo_head++;
		}
		while (sending && outstanding < outstanding_max &&
		       fifo_tail - fifo_head < DNS_FIFO && (rate == 0 || now >= next_send)) {
			int k = (int)(sent % n_names);
			int tries = 0;

			while (slots[next_id].used && tries++ < 65536)
				next_id++;
			message[0] = (unsigned char)(next_id >> 8);
			message[1] = (unsigned char)next_id;
			message[2] = 0x01; /* RD */
			message[3] = 0;
			message[4] = 0, message[5] = 1; /* one question */
			memset(message + 6, 0, 6);
			memcpy(message + 12, questions[k], (size_t)question_length[k]);
			if (sendto(fd, message, 12 + (size_t)question_length[k], 0,
				   (const struct sockaddr *)&server.addr, server.length) < 0) {
				if (!first_send_errno)
					first_send_errno = errno;
				send_errors++;
				if (errno == EAGAIN || errno == ENOBUFS)
					break;
			} else {
				slots[next_id] =
					(struct dns_slot){.used = true, .seq = ++seq, .at = now};
				fifo[fifo_tail++ % DNS_FIFO] =
					(struct dns_sent){.id = next_id, .seq = seq, .at = now};
				outstanding++;
			}
			sent++;
			next_id++;
			if (rate > 0) {
				next_send += 1 / rate;
				if (now - next_send >
				    0.1) { /* far behind: do not burst to catch up */
					late++;
					next_send = now;
				}
			}
			now = now_seconds();
			sending = !stop_requested && now < deadline && sent < max;
		}
		if (!sending && outstanding == 0)
			break;
		if (stop_requested && now > deadline + timeout)
			break;

		/* wait for replies, a send time or the oldest query's expiry */
		double wait = 0.01;

		if (sending && rate > 0 && next_send - now < wait)
			wait = next_send - now;
		if (fifo_head != fifo_tail) {
			double expiry = fifo[fifo_head % DNS_FIFO].at + timeout - now;

			if (expiry < wait)
				wait = expiry;
		}
		if (wait > 0) {
			struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(wait * 1e9)};
			fd_set set;

			FD_ZERO(&set);
			FD_SET(fd, &set);
			pselect(fd + 1, &set, NULL, NULL, &ts, NULL);
		}
		for (int k = 0; k < 256; k++) {
			ssize_t n = recv(fd, reply, sizeof(reply), 0);

			if (n < 0)
				break;
			if (n < 12 || !(reply[2] & 0x80))
				continue;
			uint16_t id = (uint16_t)(reply[0] << 8 | reply[1]);
			struct dns_slot *slot = &slots[id];

			if (!slot->used)
				continue; /* late, after its timeout: already counted */
			double t = now_seconds();

			slot->used = false;
			outstanding--;
			int rcode = reply[3] & 0x0f, ancount = reply[6] << 8 | reply[7];

			if (rcode || !ancount) {
				bad++;
				if (first_rcode < 0)
					first_rcode = rcode;
				continue;
			}
			answered++;
			if (lat_n == lat_cap) {
				lat_cap *= 2;
				lat = realloc(lat, lat_cap * sizeof(*lat));
				if (!lat)
					die("dns: out of memory");
			}
			lat[lat_n++] = (float)((t - slot->at) * 1e6);
		}
	}
	double elapsed = (now_seconds() < deadline ? now_seconds() : deadline) - start;

	timeouts += outstanding;
	qsort(lat, lat_n, sizeof(*lat), latency_compare);
	double sum = 0;

	for (size_t i = 0; i < lat_n; i++)
		sum += lat[i];
	printf("{\"sent\":%ld,\"answered\":%ld,\"bad\":%ld,\"first_rcode\":%d,\"timeouts\":%ld,"
	       "\"send_errors\":%ld,\"first_send_error\":\"%s\",\"late\":%ld,\"seconds\":%.4f,"
	       "\"rate\":%.1f,\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f,"
	       "\"mean_us\":%.1f}\n",
	       sent, answered, bad, first_rcode, timeouts, send_errors,
	       first_send_errno ? strerror(first_send_errno) : "", late, elapsed,
	       elapsed > 0 ? answered / elapsed : 0.0, latency_pct(lat, lat_n, 50),
	       latency_pct(lat, lat_n, 90), latency_pct(lat, lat_n, 99),
	       lat_n ? lat[lat_n - 1] : 0.0, lat_n ? sum / (double)lat_n : 0.0);
	free(lat);
	free(fifo);
	close(fd);
	return answered > 0 ? 0 : 1;
}

/* ---- deny: connects to a denied address in a tight loop ---- */

static int cmd_deny(int argc, char **argv)
{
	struct endpoint target;
	bool have_target = false, tcp = false;
	double seconds = 2;
	long max = 1000000000L;
	long attempts = 0, eperm = 0, connected = 0, other = 0;
	int first_other = 0;

	for (int i = 0; i + 1 < argc; i += 2) {
		const char *value = argv[i + 1];

		if (!strcmp(argv[i], "--target")) {
			if (endpoint_parse(value, &target))
				die("deny: bad --target");
			have_target = true;
		} else if (!strcmp(argv[i], "--proto")) {
			if (!strcmp(value, "tcp"))
				tcp = true;
			else if (strcmp(value, "udp"))
				die("deny: --proto udp|tcp");
		} else if (!strcmp(argv[i], "--seconds")) {
			seconds = atof(value);
		} else if (!strcmp(argv[i], "--max")) {
			max = atol(value);
		} else {
			die("deny: unknown option");
		}
	}
	if (!have_target || seconds <= 0)
		die("deny: usage: --target ADDR:PORT [--proto udp|tcp] [--seconds S] [--max N]");
	install_signals();
	int udp_fd = tcp ? -1 : socket(target.addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (!tcp && udp_fd < 0)
		die("deny: socket");
	double start = now_seconds(), deadline = start + seconds, now = start;

	while (attempts < max && !stop_requested) {
		if ((attempts & 255) == 0 && (now = now_seconds()) >= deadline)
			break;
		int fd = udp_fd;

		if (tcp &&
		    (fd = socket(target.addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
			other++;
			if (!first_other)
				first_other = errno;
			attempts++;
			continue;
		}
		int rc = connect(fd, (const struct sockaddr *)&target.addr, target.length);
		int err = rc ? errno : 0;

		if (tcp)
			close(fd);
		attempts++;
		if (rc == 0) {
			connected++;
		} else if (err == EPERM) {
			eperm++;
		} else {
			other++;
			if (!first_other)
				first_other = err;
		}
	}
	double elapsed = now_seconds() - start;

	if (udp_fd >= 0)
		close(udp_fd);
	printf("{\"attempts\":%ld,\"eperm\":%ld,\"connected\":%ld,\"other_error\":%ld,"
	       "\"first_other\":\"%s\",\"seconds\":%.4f,\"rate\":%.1f}\n",
	       attempts, eperm, connected, other, first_other ? strerror(first_other) : "", elapsed,
	       elapsed > 0 ? attempts / elapsed : 0.0);
	/* every attempt must be refused with EPERM: anything else is a broken bench */
	return eperm > 0 && connected == 0 && other == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		die("usage: bfbench serve|httpd|connect|verdicts|dns|deny ...");
	if (!strcmp(argv[1], "serve"))
		return cmd_serve(argc - 2, argv + 2);
	if (!strcmp(argv[1], "httpd"))
		return cmd_httpd(argc - 2, argv + 2);
	if (!strcmp(argv[1], "connect"))
		return cmd_connect(argc - 2, argv + 2);
	if (!strcmp(argv[1], "verdicts"))
		return cmd_verdicts(argc - 2, argv + 2);
	if (!strcmp(argv[1], "dns"))
		return cmd_dns(argc - 2, argv + 2);
	if (!strcmp(argv[1], "deny"))
		return cmd_deny(argc - 2, argv + 2);
	die("unknown command");
	return 1;
}
