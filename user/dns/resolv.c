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
