// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The name table (see names.h): reference-counted host names with their
 * resolved addresses, refresh scheduling and grace expiry over an injected
 * clock, and the range filter of docs/policy.md. No I/O, no clock of its own.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "names.h"

void names_config_default(struct names_config *config)
{
	config->min_ttl = 30;
	config->max_ttl = 3600;
	config->grace = 300;
	config->retry = 10;
}

uint32_t names_ttl_clamp(const struct names_config *config, uint32_t ttl)
{
	if (ttl < config->min_ttl)
		ttl = config->min_ttl;
	if (ttl > config->max_ttl)
		ttl = config->max_ttl;
	return ttl;
}

int names_table_init(struct names_table *table, const struct names_config *config)
{
	memset(table, 0, sizeof(*table));
	if (config)
		table->config = *config;
	else
		names_config_default(&table->config);
	return 0;
}

void names_table_free(struct names_table *table)
{
	size_t i;

	for (i = 0; i < table->count; i++)
		free(table->entries[i]);
	free(table->entries);
	table->entries = NULL;
	table->count = 0;
	table->capacity = 0;
}

static ssize_t names_index(const struct names_table *table, const char *name)
{
	size_t i;

	for (i = 0; i < table->count; i++) {
		if (strcmp(table->entries[i]->name, name) == 0)
			return (ssize_t)i;
	}
	return -1;
}

struct names_entry *names_find(struct names_table *table, const char *name)
{
	ssize_t i = names_index(table, name);

	return i < 0 ? NULL : table->entries[i];
}

int names_ref(struct names_table *table, const char *name, struct names_entry **out)
{
	struct names_entry *entry;
	size_t len;

	if (!name)
		return -EINVAL;
	len = strlen(name);
	if (len == 0 || len > HOSTNAME_MAX_LENGTH)
		return -EINVAL;

	entry = names_find(table, name);
	if (entry) {
		if (entry->users == UINT_MAX)
			return -EOVERFLOW;
		entry->users++;
		goto done;
	}

	if (table->count == table->capacity) {
		size_t capacity = table->capacity ? table->capacity * 2 : 8;
		struct names_entry **entries;

		entries = realloc(table->entries, capacity * sizeof(*entries));
		if (!entries)
			return -ENOMEM;
		table->entries = entries;
		table->capacity = capacity;
	}
	entry = calloc(1, sizeof(*entry));
	if (!entry)
		return -ENOMEM;
	memcpy(entry->name, name, len + 1);
	entry->users = 1;
	entry->next_refresh = 0;
	table->entries[table->count++] = entry;
done:
	if (out)
		*out = entry;
	return 0;
}

void names_unref(struct names_table *table, const char *name)
{
	ssize_t i = names_index(table, name);
	struct names_entry *entry;

	if (i < 0)
		return;
	entry = table->entries[i];
	if (entry->users > 1) {
		entry->users--;
		return;
	}
	free(entry);
	memmove(&table->entries[i], &table->entries[i + 1],
		(table->count - (size_t)i - 1) * sizeof(*table->entries));
	table->count--;
}

void names_round_begin(struct names_entry *entry, uint64_t now)
{
	entry->in_flight = 2;
	entry->last_attempt = now;
	entry->round_min_ttl = 0;
	entry->round_failed = false;
}

static const uint8_t nat64_prefix[12] = {0x00, 0x64, 0xff, 0x9b};
static const uint8_t mapped_prefix[12] = {[10] = 0xff, [11] = 0xff};

/* NAT64 addresses are stored as the IPv4-mapped form of the IPv4 they carry. */
static void canonical_address(const struct in6_addr *in, struct in6_addr *out)
{
	*out = *in;
	if (memcmp(in->s6_addr, nat64_prefix, 12) == 0)
		memcpy(out->s6_addr, mapped_prefix, 12);
}

bool names_round_answer(const struct names_config *config, struct names_entry *entry, int family,
			const struct in6_addr *addrs, const uint32_t *ttls, size_t count,
			uint64_t now)
{
	bool added = false;
	size_t i, j;

	/* The family does not change the bookkeeping: absent addresses age out alike. */
	(void)family;
	for (i = 0; i < count; i++) {
		uint32_t ttl = names_ttl_clamp(config, ttls[i]);
		struct names_address *slot = NULL;
		struct in6_addr addr;

		canonical_address(&addrs[i], &addr);
		if (entry->round_min_ttl == 0 || ttl < entry->round_min_ttl)
			entry->round_min_ttl = ttl;
		for (j = 0; j < entry->count; j++) {
			if (memcmp(&entry->addresses[j].addr, &addr, sizeof(addr)) == 0) {
				slot = &entry->addresses[j];
				break;
			}
		}
		if (!slot) {
			if (entry->count >= NAMES_MAX_ADDRESSES) {
				entry->truncated = true;
				continue;
			}
			slot = &entry->addresses[entry->count++];
			slot->addr = addr;
			added = true;
		}
		slot->last_seen = now;
		slot->ttl = ttl;
	}
	return added;
}

void names_round_failure(struct names_entry *entry, int error, const char *text, uint64_t now)
{
	(void)now;
	entry->last_error = error;
	if (!text)
		text = "";
	strncpy(entry->last_error_text, text, sizeof(entry->last_error_text) - 1);
	entry->last_error_text[sizeof(entry->last_error_text) - 1] = '\0';
	entry->round_failed = true;
}

void names_round_query_done(const struct names_config *config, struct names_entry *entry,
			    uint64_t now)
{
	if (entry->in_flight == 0)
		return;
	if (--entry->in_flight > 0)
		return;
	entry->resolved_once = true;
	if (entry->round_min_ttl > 0) {
		/* At least one family answered with addresses: a success. */
		entry->last_success = now;
		entry->last_error = 0;
		entry->last_error_text[0] = '\0';
		entry->next_refresh = now + entry->round_min_ttl;
	} else {
		entry->next_refresh = now + config->retry;
	}
}

/* The first time at which the address is past its grace (saturating). */
static uint64_t address_deadline(const struct names_config *config,
				 const struct names_address *address)
{
	uint64_t keep = (uint64_t)address->ttl + config->grace + 1;

	if (address->last_seen > UINT64_MAX - keep)
		return UINT64_MAX;
	return address->last_seen + keep;
}

bool names_expire(struct names_table *table, uint64_t now)
{
	bool changed = false;
	size_t i, j, kept;

	for (i = 0; i < table->count; i++) {
		struct names_entry *entry = table->entries[i];

		kept = 0;
		for (j = 0; j < entry->count; j++) {
			if (address_deadline(&table->config, &entry->addresses[j]) <= now)
				continue;
			if (kept != j)
				entry->addresses[kept] = entry->addresses[j];
			kept++;
		}
		if (kept != entry->count) {
			entry->count = kept;
			entry->truncated = false;
			changed = true;
		}
	}
	return changed;
}

uint64_t names_next_deadline(const struct names_table *table)
{
	uint64_t deadline = UINT64_MAX, t;
	size_t i, j;

	for (i = 0; i < table->count; i++) {
		const struct names_entry *entry = table->entries[i];

		if (!entry->in_flight && entry->next_refresh < deadline)
			deadline = entry->next_refresh;
		for (j = 0; j < entry->count; j++) {
			t = address_deadline(&table->config, &entry->addresses[j]);
			if (t < deadline)
				deadline = t;
		}
	}
	return deadline;
}

bool names_due(const struct names_entry *entry, uint64_t now)
{
	return !entry->in_flight && entry->next_refresh <= now;
}

struct range4 {
	uint32_t addr;
	unsigned int prefix;
};

struct range6 {
	uint8_t addr[16];
	unsigned int prefix;
};

static const struct range4 filtered4[] = {
	{0x00000000, 8},  /* 0.0.0.0/8 */
	{0x0a000000, 8},  /* 10.0.0.0/8 */
	{0x64400000, 10}, /* 100.64.0.0/10 */
	{0x7f000000, 8},  /* 127.0.0.0/8 */
	{0xa9fe0000, 16}, /* 169.254.0.0/16 */
	{0xac100000, 12}, /* 172.16.0.0/12 */
	{0xc0a80000, 16}, /* 192.168.0.0/16 */
	{0xe0000000, 4},  /* 224.0.0.0/4 */
	{0xf0000000, 4},  /* 240.0.0.0/4 */
};

/* Filtered outright, whatever follows the prefix. */
static const struct range6 filtered6[] = {
	{{0}, 96},	    /* ::/96: ::, ::1 and IPv4-compatible ::a.b.c.d (deprecated) */
	{{0x01, 0x00}, 64}, /* 100::/64: discard-only (RFC 6666) */
	{{0xfc}, 7},	    /* fc00::/7: unique local */
	{{0xfe, 0x80}, 10}, /* fe80::/10: link-local */
	{{0xfe, 0xc0}, 10}, /* fec0::/10: site-local (deprecated, still routed by some) */
	{{0xff}, 8},	    /* ff00::/8: multicast */
};

/* Prefixes whose addresses carry an IPv4 address, judged by the IPv4 ranges. */
enum embedded_kind {
	EMBEDDED_LAST32, /* the last 32 bits */
	EMBEDDED_6TO4,	 /* bits 16..47 */
	EMBEDDED_TEREDO, /* the server (bits 32..63) and the client (last 32 bits, inverted) */
};

static const struct {
	struct range6 range;
	enum embedded_kind kind;
} embedded[] = {
	{{{[10] = 0xff, [11] = 0xff}, 96}, EMBEDDED_LAST32}, /* ::ffff:0:0/96 mapped */
	{{{0x00, 0x64, 0xff, 0x9b}, 96}, EMBEDDED_LAST32},   /* 64:ff9b::/96 NAT64 */
	/*
	 * Local-use NAT64 (RFC 8215): the network picks a prefix inside it, in
	 * practice a /96 (the IPv4 in the last 32 bits), which is what is judged.
	 * RFC 6052's shorter layouts put the IPv4 elsewhere: /48 and /56 leave
	 * zeros in the last 32 bits (dropped as 0.0.0.0/8, closed), /64 leaves
	 * the IPv4's last octet there (judged by that alone).
	 */
	{{{0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48}, EMBEDDED_LAST32},
	{{{0x20, 0x02}, 16}, EMBEDDED_6TO4},		   /* 2002::/16 6to4 */
	{{{0x20, 0x01, 0x00, 0x00}, 32}, EMBEDDED_TEREDO}, /* 2001::/32 Teredo */
};

static bool prefix6_match(const uint8_t *a, const uint8_t *b, unsigned int prefix)
{
	unsigned int bytes = prefix / 8, bits = prefix % 8;
	uint8_t mask;

	if (memcmp(a, b, bytes) != 0)
		return false;
	if (bits == 0)
		return true;
	mask = (uint8_t)(0xff << (8 - bits));
	return (a[bytes] & mask) == (b[bytes] & mask);
}

static uint32_t get32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static bool ipv4_is_filtered(uint32_t v4)
{
	for (size_t i = 0; i < sizeof(filtered4) / sizeof(filtered4[0]); i++) {
		uint32_t mask =
			filtered4[i].prefix ? ~(uint32_t)0 << (32 - filtered4[i].prefix) : 0;

		if ((v4 & mask) == filtered4[i].addr)
			return true;
	}
	return false;
}

/*
 * The IPv4 addresses an address of this kind carries. Teredo (RFC 4380) is
 * 2001:0:SERVER:flags:port:CLIENT, the client's mapped IPv4 stored inverted.
 * A Teredo host sends to the client's IPv4 directly (UDP) and reaches it
 * through its server first, so both are destinations and both are judged:
 * a name cannot smuggle 169.254.169.254 in either half.
 */
static bool embedded_is_filtered(const uint8_t *b, enum embedded_kind kind)
{
	switch (kind) {
	case EMBEDDED_LAST32:
		return ipv4_is_filtered(get32(b + 12));
	case EMBEDDED_6TO4:
		return ipv4_is_filtered(get32(b + 2));
	case EMBEDDED_TEREDO:
		return ipv4_is_filtered(get32(b + 4)) || ipv4_is_filtered(~get32(b + 12));
	}
	return true; /* fail closed */
}

bool names_address_is_filtered(const struct in6_addr *addr)
{
	const uint8_t *b = addr->s6_addr;
	size_t i;

	for (i = 0; i < sizeof(filtered6) / sizeof(filtered6[0]); i++)
		if (prefix6_match(b, filtered6[i].addr, filtered6[i].prefix))
			return true;
	for (i = 0; i < sizeof(embedded) / sizeof(embedded[0]); i++)
		if (prefix6_match(b, embedded[i].range.addr, embedded[i].range.prefix))
			return embedded_is_filtered(b, embedded[i].kind);
	return false;
}

bool names_address_is_loopback(const struct in6_addr *addr)
{
	if (IN6_IS_ADDR_V4MAPPED(addr))
		return addr->s6_addr[12] == 127 || get32(&addr->s6_addr[12]) == 0;
	return IN6_IS_ADDR_LOOPBACK(addr) || IN6_IS_ADDR_UNSPECIFIED(addr);
}

/* Does an exact literal entry name this address, for every port or for this one? */
static bool names_exact_literal(const struct allowset *literals, const struct in6_addr *addr,
				uint16_t port)
{
	struct allowset_entry exact = {.prefix_len = 128, .port = 0};

	memcpy(exact.addr, addr->s6_addr, sizeof(exact.addr));
	if (allowset_contains(literals, &exact))
		return true;
	exact.port = port;
	return port && allowset_contains(literals, &exact);
}

bool names_address_is_dropped(const struct in6_addr *addr, const struct allowset *literals,
			      uint16_t port)
{
	if (!names_address_is_filtered(addr))
		return false;
	/*
	 * Loopback opens to exact entries only (the kernel looks it up in the
	 * exact map alone): a CIDR that covers it (0.0.0.0/0) lets no name's
	 * answer reach a local relay.
	 */
	if (names_address_is_loopback(addr))
		return !names_exact_literal(literals, addr, port);
	/* A literal names what it allows: the address as learned, not the IPv4 it carries. */
	return !allowset_covers(literals, addr->s6_addr, port);
}
