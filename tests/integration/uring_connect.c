// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * uring_connect ADDR PORT: a TCP connect submitted through io_uring
 * (IORING_OP_CONNECT), so the integration tests can show that the cgroup
 * connect hooks judge it like a connect(2).
 *
 * Exit status: 0 connected, 1 denied (EPERM or EACCES), 2 any other error,
 * 3 io_uring is unavailable here (the test then skips).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts = {.tv_sec = 5};
	int fd, ret, res;

	if (argc != 3) {
		fprintf(stderr, "usage: %s ADDR PORT\n", argv[0]);
		return 2;
	}
	memset(&ss, 0, sizeof(ss));
	if (strchr(argv[1], ':')) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((unsigned short)atoi(argv[2]));
		if (inet_pton(AF_INET6, argv[1], &sin6->sin6_addr) != 1)
			goto bad_addr;
		len = sizeof(*sin6);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
		sin->sin_family = AF_INET;
		sin->sin_port = htons((unsigned short)atoi(argv[2]));
		if (inet_pton(AF_INET, argv[1], &sin->sin_addr) != 1)
			goto bad_addr;
		len = sizeof(*sin);
	}

	ret = io_uring_queue_init(4, &ring, 0);
	if (ret < 0) {
		printf("uring_connect: io_uring unavailable: %s\n", strerror(-ret));
		return 3;
	}
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (fd < 0) {
		printf("uring_connect: socket: %s\n", strerror(errno));
		return (errno == EPERM || errno == EACCES) ? 1 : 2;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_connect(sqe, fd, (struct sockaddr *)&ss, len);
	io_uring_submit(&ring);
	ret = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
	if (ret < 0) {
		printf("uring_connect %s port %s: error: wait: %s\n", argv[1], argv[2],
		       strerror(-ret));
		return 2;
	}
	res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	if (res == 0) {
		printf("uring_connect %s port %s: ok: connected\n", argv[1], argv[2]);
		return 0;
	}
	if (res == -EPERM || res == -EACCES) {
		printf("uring_connect %s port %s: denied: %s (%s)\n", argv[1], argv[2],
		       res == -EPERM ? "EPERM" : "EACCES", strerror(-res));
		return 1;
	}
	if (res == -EINVAL || res == -EOPNOTSUPP) {
		printf("uring_connect: IORING_OP_CONNECT unsupported: %s\n", strerror(-res));
		return 3;
	}
	printf("uring_connect %s port %s: error: %s\n", argv[1], argv[2], strerror(-res));
	return 2;

bad_addr:
	fprintf(stderr, "uring_connect: bad address %s\n", argv[1]);
	return 2;
}
