// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for a container's resolv.conf (untrusted: the container
 * writes it; runtime_network reads it). Besides "no crash, no overflow": a
 * parsed server is IPv4 or IPv6 on port 53 with its length, and every search
 * domain kept is a normalised host name (NUL-terminated, lower case).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "dns/responder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct responder_runtime runtime;
	int err = responder_resolv_parse((const char *)data, size, &runtime);

	if (err && err != -ENOENT)
		abort();
	if (runtime.search_count > RESPONDER_RUNTIME_SEARCH)
		abort();
	for (size_t i = 0; i < runtime.search_count; i++) {
		size_t length = strnlen(runtime.search[i], sizeof(runtime.search[i]));

		if (!length || length >= sizeof(runtime.search[i]))
			abort();
		for (size_t c = 0; c < length; c++)
			if (runtime.search[i][c] >= 'A' && runtime.search[i][c] <= 'Z')
				abort();
	}
	if (err)
		return 0;
	if (runtime.server.ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)&runtime.server;

		if (runtime.server_length != sizeof(*sin) || ntohs(sin->sin_port) != 53)
			abort();
	} else if (runtime.server.ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)&runtime.server;

		if (runtime.server_length != sizeof(*sin6) || ntohs(sin6->sin6_port) != 53)
			abort();
	} else {
		abort();
	}
	return 0;
}
