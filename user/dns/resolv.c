// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A container's resolv.conf, for runtime_network: which resolver its runtime
 * gave it and which search domains. The container writes this file: it is
 * parsed as untrusted input (bounded, fuzzed), and what it names is only a
 * candidate that the caller checks (the resolver must lie on the namespace's
 * loopback or in one of its connected subnets).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/hostmatch.h"
#include "responder.h"

#define RESOLV_LINE_MAX 1024

static void resolv_mapped(const void *v4, struct in6_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->s6_addr[10] = out->s6_addr[11] = 0xff;
	memcpy(&out->s6_addr[12], v4, 4);
}

/* The next blank-separated word of line at *at, into word; false when none. */
static bool resolv_word(const char *line, size_t *at, char *word, size_t size)
{
	size_t start, length;

	while (line[*at] == ' ' || line[*at] == '\t')
		(*at)++;
	start = *at;
	while (line[*at] && line[*at] != ' ' && line[*at] != '\t')
		(*at)++;
	length = *at - start;
	if (!length || length >= size)
		return false;
	memcpy(word, line + start, length);
	word[length] = '\0';
	return true;
}

static bool resolv_nameserver(const char *text, struct responder_runtime *out)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&out->server;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&out->server;
	char address[INET6_ADDRSTRLEN + 1];

	memset(&out->server, 0, sizeof(out->server));
	if (strlen(text) >= sizeof(address) || strchr(text, '%'))
		return false; /* a scoped address names an interface: not ours to pick */
	snprintf(address, sizeof(address), "%s", text);
	if (inet_pton(AF_INET, address, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(53);
		out->server_length = sizeof(*sin);
		return true;
	}
	if (inet_pton(AF_INET6, address, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(53);
		out->server_length = sizeof(*sin6);
		return true;
	}
	return false;
}

/* A search line replaces what an earlier one said (as the C library reads it). */
static void resolv_search(const char *line, size_t at, struct responder_runtime *out)
{
	char word[RESOLV_LINE_MAX], err[64];

	out->search_count = 0;
	while (out->search_count < RESPONDER_RUNTIME_SEARCH &&
	       resolv_word(line, &at, word, sizeof(word))) {
		char *name = out->search[out->search_count];

		if (hostname_normalize(word, name, HOSTNAME_MAX_LENGTH + 1, err, sizeof(err)))
			continue;
		out->search_count++;
	}
}

int responder_resolv_parse(const char *text, size_t length, struct responder_runtime *out)
{
	char line[RESOLV_LINE_MAX], word[RESOLV_LINE_MAX];
	bool found = false;
	size_t at = 0;

	memset(out, 0, sizeof(*out));
	while (at < length) {
		size_t end = at, used = 0, pos = 0;

		while (end < length && text[end] != '\n')
			end++;
		/* A longer line is cut: its first words still count, as the C library's do. */
		for (size_t i = at; i < end && used + 1 < sizeof(line); i++)
			line[used++] = text[i] == '\0' || text[i] == '\r' ? ' ' : text[i];
		line[used] = '\0';
		at = end + 1;
		if (!resolv_word(line, &pos, word, sizeof(word)))
			continue;
		if (!strcmp(word, "nameserver") && !found) {
			if (resolv_word(line, &pos, word, sizeof(word)))
				found = resolv_nameserver(word, out);
		} else if (!strcmp(word, "search") || !strcmp(word, "domain")) {
			resolv_search(line, pos, out);
		}
	}
	return found ? 0 : -ENOENT;
}

bool responder_subnets_contain(const struct responder_subnets *subnets, const struct in6_addr *addr)
{
	for (size_t i = 0; i < subnets->count; i++) {
		uint8_t bits = subnets->prefix[i];
		size_t full = bits / 8;

		/* A /32 (or /128) holds the namespace's own address only: nothing to reach. */
		if (bits >= 128 ||
		    IN6_IS_ADDR_V4MAPPED(addr) != IN6_IS_ADDR_V4MAPPED(&subnets->addr[i]) ||
		    memcmp(addr, &subnets->addr[i], full))
			continue;
		if (bits % 8) {
			uint8_t mask = (uint8_t)(0xff << (8 - bits % 8));

			if ((addr->s6_addr[full] ^ subnets->addr[i].s6_addr[full]) & mask)
				continue;
		}
		return true;
	}
	return false;
}

bool responder_runtime_server_ok(const struct responder_runtime *runtime,
				 const struct responder_subnets *subnets)
{
	struct in6_addr addr;

	if (runtime->server.ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)&runtime->server;

		if ((ntohl(sin->sin_addr.s_addr) >> 24) == 127)
			return true; /* Docker's 127.0.0.11: the namespace's own loopback */
		resolv_mapped(&sin->sin_addr, &addr);
	} else {
		addr = ((const struct sockaddr_in6 *)&runtime->server)->sin6_addr;
		if (IN6_IS_ADDR_LOOPBACK(&addr))
			return true;
	}
	return responder_subnets_contain(subnets, &addr);
}

/* A single label, or a name under one of the runtime's search domains. */
bool responder_runtime_eligible(const struct responder_runtime *runtime, const char *name)
{
	size_t length = strlen(name);

	if (!strchr(name, '.'))
		return true;
	for (size_t i = 0; i < runtime->search_count; i++) {
		size_t domain = strlen(runtime->search[i]);

		if (length > domain + 1 && name[length - domain - 1] == '.' &&
		    !strcmp(name + length - domain, runtime->search[i]))
			return true;
	}
	return false;
}
