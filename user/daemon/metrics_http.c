// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --metrics-listen: the Prometheus text over the smallest HTTP that scrapers accept. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "metrics.h"
#include "metrics_http.h"

/* One scrape: answer whatever was asked with the metrics, then close (HTTP/1.0). */
void metrics_http_serve(int listen_fd, struct sandbox_registry *registry)
{
	static const char header[] = "HTTP/1.0 200 OK\r\nContent-Type: text/plain; "
				     "version=0.0.4\r\nConnection: close\r\n\r\n";
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	struct timeval timeout = {1, 0};
	char request[1024], *text;

	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
	if (recv(fd, request, sizeof(request), 0) > 0) {
		text = metrics_text(registry);
		if (send(fd, header, sizeof(header) - 1, MSG_NOSIGNAL) > 0 && text)
			send(fd, text, strlen(text), MSG_NOSIGNAL);
		free(text);
	}
	close(fd);
}

int metrics_http_listen(const char *address)
{
	struct sockaddr_storage storage = {0};
	char host[64];
	const char *colon = strrchr(address, ':');
	int port, one = 1, fd;
	socklen_t length;

	if (!colon || (size_t)(colon - address) >= sizeof(host) || (port = atoi(colon + 1)) <= 0 ||
	    port > 65535)
		return -EINVAL;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - address), address);
	if (host[0] == '[') {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&storage;

		host[strlen(host) - 1] = '\0';
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		if (inet_pton(AF_INET6, host + 1, &sin6->sin6_addr) != 1)
			return -EINVAL;
		length = sizeof(*sin6);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&storage;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
			return -EINVAL;
		length = sizeof(*sin);
	}
	fd = socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&storage, length) || listen(fd, 16)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}
