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
	struct sockaddr_in6 addr = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port),
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
		struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.fd = ctx->listeners[i]};

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
		const char *reply = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

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
		if (connect(c->fd, (const struct sockaddr *)&to->addr, to->length) && errno != EINPROGRESS) {
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
	int request_length = snprintf(request, sizeof(request),
				      "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", copts.target.text,
				      copts.target.text);

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
				} else if (write(c->fd, request, (size_t)request_length) != request_length) {
					conn_finish(ep, c, false, errno);
				} else {
					struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};

					c->state = SENT_CONNECT;
					epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
					continue;
				}
			} else {
				ssize_t r = read(c->fd, c->reply + c->got, sizeof(c->reply) - 1 - c->got);

				if (r < 0 && errno == EAGAIN)
					continue;
				if (r <= 0) {
					conn_finish(ep, c, false, r < 0 ? errno : ECONNRESET);
				} else {
					c->got += (size_t)r;
					c->reply[c->got] = 0;
					if (!strstr(c->reply, "\r\n\r\n") && c->got < sizeof(c->reply) - 1)
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
		die("connect: usage: --target ADDR:PORT [--proxy ADDR:PORT] [--seconds S] [--max N] "
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
	long allowed_ok = 0, allowed_wrong = 0, allowed_slow = 0, denied_ok = 0,
	     denied_wrong = 0, denied_other = 0;
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
		die("verdicts: usage: --allow ADDR:PORT,... --deny ADDR:PORT,... [--seconds S] [--max N]");
	install_signals();
	double deadline = now_seconds() + seconds;
	struct linger linger = {.l_onoff = 1, .l_linger = 0};
	struct timeval timeout = {.tv_sec = 3};

	for (long k = 0; k < max && !stop_requested && now_seconds() < deadline; k++) {
		bool want_allow = (k % 2) == 0;
		const struct endpoint *to = want_allow ? &allow[(k / 2) % n_allow]
						       : &deny[(k / 2) % n_deny];
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
				snprintf(first_wrong, sizeof(first_wrong), "denied %s: %s (not EPERM)",
					 to->text, strerror(err));
		}
	}
	printf("{\"allowed_ok\":%ld,\"allowed_refused\":%ld,\"allowed_slow\":%ld,"
	       "\"allowed_max_ms\":%.2f,\"denied_eperm\":%ld,\"denied_connected\":%ld,"
	       "\"denied_other_error\":%ld,\"wrong_verdicts\":%ld,\"first_wrong\":\"%s\"}\n",
	       allowed_ok, allowed_wrong, allowed_slow, allowed_max_ms, denied_ok, denied_wrong,
	       denied_other, allowed_wrong + denied_wrong, first_wrong);
	return allowed_ok + denied_ok > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		die("usage: bfbench serve|httpd|connect|verdicts ...");
	if (!strcmp(argv[1], "serve"))
		return cmd_serve(argc - 2, argv + 2);
	if (!strcmp(argv[1], "httpd"))
		return cmd_httpd(argc - 2, argv + 2);
	if (!strcmp(argv[1], "connect"))
		return cmd_connect(argc - 2, argv + 2);
	if (!strcmp(argv[1], "verdicts"))
		return cmd_verdicts(argc - 2, argv + 2);
	die("unknown command");
	return 1;
}
