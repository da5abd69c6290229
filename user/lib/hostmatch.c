// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The grammar and meaning of one policy entry (docs/design.md "Semantics"): host
 * names (RFC 1123, normalised), wildcards, addresses and CIDRs, each with an
 * optional port; and the name rules ("example.com" allows the name and every
 * subdomain, "*.example.com" every subdomain but never the apex), matched on
 * label boundaries. The policy document itself is user/lib/policy.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hostmatch.h"

/* Room for the reason given for a bad entry. */
#define HOSTMATCH_WHY_SIZE 512
/* How much of an entry an error message shows. */
#define HOSTMATCH_QUOTE_MAX 64

static const unsigned char hostmatch_nat64_prefix[12] = {0x00, 0x64, 0xff, 0x9b};

static void hostmatch_errf(char *err, size_t err_size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void hostmatch_errf(char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;

	if (!err || !err_size)
		return;
	va_start(ap, fmt);
	vsnprintf(err, err_size, fmt, ap);
	va_end(ap);
}

static char hostmatch_lower(char c)
{
	/* Not tolower(): the locale must not decide what a host name is. */
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static bool hostmatch_is_label_char(char c)
{
	c = hostmatch_lower(c);
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* Checks one label name[start, end); writes a reason into err. */
static int hostmatch_check_label(const char *name, size_t start, size_t end, char *err,
				 size_t err_size)
{
	size_t len = end - start;

	if (len == 0) {
		hostmatch_errf(err, err_size, "empty label (two dots in a row, or a leading dot)");
		return -EINVAL;
	}
	if (len > HOSTNAME_MAX_LABEL) {
		hostmatch_errf(err, err_size, "a label is %zu characters long; the limit is %d",
			       len, HOSTNAME_MAX_LABEL);
		return -EINVAL;
	}
	if (name[start] == '-' || name[end - 1] == '-') {
		hostmatch_errf(err, err_size, "a label starts or ends with a hyphen");
		return -EINVAL;
	}
	return 0;
}

static void hostmatch_bad_char(char c, char *err, size_t err_size)
{
	unsigned char u = (unsigned char)c;

	if (u > 0x20 && u < 0x7f)
		hostmatch_errf(err, err_size,
			       "invalid character '%c' (host names use letters, digits, "
			       "hyphens and dots)",
			       c);
	else
		hostmatch_errf(err, err_size,
			       "invalid character 0x%02x (host names use letters, digits, "
			       "hyphens and dots)",
			       u);
}

/*
 * RFC 1123 2.1 lets a label start with a digit, but a name whose last label is
 * all digits would be read as an IPv4 address by resolvers ("1.2.3" is
 * 1.2.0.3 to inet_aton): such a name is never valid.
 */
static bool hostmatch_last_label_numeric(const char *name, size_t len)
{
	size_t i = len;

	while (i > 0 && name[i - 1] != '.') {
		if (name[i - 1] < '0' || name[i - 1] > '9')
			return false;
		i--;
	}
	return i < len;
}

int hostname_normalize(const char *name, char *out, size_t out_size, char *err, size_t err_size)
{
	size_t len, i, start = 0;
	int ret;

	if (!name || !out) {
		hostmatch_errf(err, err_size, "no name");
		return -EINVAL;
	}
	/* Bounded: a caller may hand us any text (a DNS query, a task file). */
	len = strnlen(name, HOSTNAME_MAX_LENGTH + 2);
	if (len > 0 && name[len - 1] == '.')
		len--;
	if (len == 0) {
		hostmatch_errf(err, err_size, "empty name");
		return -EINVAL;
	}
	if (len > HOSTNAME_MAX_LENGTH) {
		hostmatch_errf(err, err_size, "the name is longer than %d characters",
			       HOSTNAME_MAX_LENGTH);
		return -EINVAL;
	}
	if (len >= out_size) {
		hostmatch_errf(err, err_size, "the name does not fit the output buffer");
		return -EINVAL;
	}
	for (i = 0; i <= len; i++) {
		if (i == len || name[i] == '.') {
			ret = hostmatch_check_label(name, start, i, err, err_size);
			if (ret)
				return ret;
			start = i + 1;
		} else if (!hostmatch_is_label_char(name[i])) {
			hostmatch_bad_char(name[i], err, err_size);
			return -EINVAL;
		}
	}
	if (hostmatch_last_label_numeric(name, len)) {
		hostmatch_errf(err, err_size,
			       "neither a valid IPv4 address nor a host name (the last label is "
			       "all digits)");
		return -EINVAL;
	}
	for (i = 0; i < len; i++)
		out[i] = hostmatch_lower(name[i]);
	out[len] = '\0';
	return 0;
}

/* Is name the suffix domain, or below it on a label boundary? */
static bool hostmatch_suffix(const char *name, const char *domain, bool apex)
{
	size_t nl = strlen(name), dl = strlen(domain);

	if (dl == 0 || nl < dl)
		return false;
	if (nl == dl)
		return apex && strcasecmp(name, domain) == 0;
	/* The dot before the suffix is what keeps "notexample.com" out. */
	return name[nl - dl - 1] == '.' && strcasecmp(name + nl - dl, domain) == 0;
}

bool hostmatch_entry(const struct policy_entry *entry, const char *name)
{
	if (!entry || !name)
		return false;
	switch (entry->kind) {
	case POLICY_ENTRY_HOSTNAME:
		return hostmatch_suffix(name, entry->name, true);
	case POLICY_ENTRY_WILDCARD:
		return hostmatch_suffix(name, entry->name, false);
	default:
		return false;
	}
}

bool hostmatch_policy(const struct policy *policy, const char *name)
{
	char normal[HOSTNAME_MAX_LENGTH + 1];
	size_t i;

	if (!policy || hostname_normalize(name, normal, sizeof(normal), NULL, 0))
		return false;
	/* Model endpoints are a lane for addresses, not a source of names. */
	for (i = 0; i < policy->n_allowed_hosts; i++)
		if (hostmatch_entry(&policy->allowed_hosts[i], normal))
			return true;
	return false;
}

/* Quotes text for a message: escaped, and cut so that one line stays readable. */
static void hostmatch_quote(const char *text, char *buf, size_t size)
{
	size_t i, o = 0;
	unsigned char c;

	buf[o++] = '"';
	for (i = 0; text[i] && o + 8 < size; i++) {
		c = (unsigned char)text[i];
		if (i == HOSTMATCH_QUOTE_MAX) {
			o += (size_t)snprintf(buf + o, size - o, "...");
			break;
		}
		if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
		else if (c == '"' || c == '\\')
			o += (size_t)snprintf(buf + o, size - o, "\\%c", c);
		else
			buf[o++] = (char)c;
	}
	buf[o++] = '"';
	buf[o] = '\0';
}

/* Strict decimal: digits only, no sign, no leading zero (one canonical spelling). */
static int hostmatch_parse_decimal(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;
	size_t i;

	if (!s[0] || (s[0] == '0' && s[1]) || strlen(s) > 6)
		return -EINVAL;
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static int hostmatch_parse_port(const char *s, uint16_t *port, char *why, size_t why_size)
{
	unsigned long v;
	int ret = hostmatch_parse_decimal(s, 65535, &v);

	if (ret == 0 && v == 0)
		ret = -ERANGE;
	if (ret == -ERANGE || (ret == -EINVAL && s[0] >= '1' && s[0] <= '9' &&
			       strspn(s, "0123456789") == strlen(s))) {
		hostmatch_errf(why, why_size,
			       "port %s is out of range 1-65535 (leave the port out to allow every "
			       "port)",
			       s);
		return -EINVAL;
	}
	if (ret) {
		hostmatch_errf(why, why_size,
			       "the port must be a decimal number 1-65535 without sign or leading "
			       "zeros");
		return -EINVAL;
	}
	*port = (uint16_t)v;
	return 0;
}

static bool hostmatch_addr_is_v4(const struct in6_addr *addr, uint8_t prefix_len)
{
	return prefix_len >= 96 && IN6_IS_ADDR_V4MAPPED(addr);
}

/* Clears the host bits; returns true when some were set. */
static bool hostmatch_mask(struct in6_addr *addr, unsigned int prefix_len)
{
	bool changed = false;
	unsigned int i, keep;
	uint8_t mask;

	for (i = 0; i < 16; i++) {
		keep = prefix_len > i * 8 ? prefix_len - i * 8 : 0;
		mask = keep >= 8 ? 0xff : (uint8_t)(0xff00 >> keep);
		if (addr->s6_addr[i] & ~mask)
			changed = true;
		addr->s6_addr[i] &= mask;
	}
	return changed;
}

/*
 * NAT64 (64:ff9b::/96) destinations are judged as the IPv4 address they
 * carry, so an entry inside that prefix is stored as the IPv4 entry it means.
 * A shorter prefix is kept as written: it is more than IPv4.
 */
static void hostmatch_map_nat64(struct policy_entry *e)
{
	if (e->prefix_len < 96 || memcmp(e->addr.s6_addr, hostmatch_nat64_prefix, 12) != 0)
		return;
	memset(e->addr.s6_addr, 0, 10);
	e->addr.s6_addr[10] = 0xff;
	e->addr.s6_addr[11] = 0xff;
}

/*
 * 0.0.0.0 or :: alone (the mapped and NAT64 forms too). The kernel side judges
 * them as loopback, since a connect to either reaches this host's listeners
 * on every address: as an entry, one would open a port of every local relay
 * at once. A CIDR that contains them (0.0.0.0/0) is fine: a CIDR never opens
 * loopback.
 */
static bool hostmatch_is_unspecified(const struct policy_entry *e)
{
	if (e->prefix_len != 128)
		return false;
	if (IN6_IS_ADDR_V4MAPPED(&e->addr))
		return !memcmp(&e->addr.s6_addr[12], "\0\0\0\0", 4);
	return IN6_IS_ADDR_UNSPECIFIED(&e->addr);
}

/* Reads the "/N" of a CIDR into e->prefix_len (full is 32 or 128). */
static int hostmatch_parse_prefix(const char *s, unsigned int full, struct policy_entry *e,
				  char *why, size_t why_size)
{
	unsigned long v;

	if (hostmatch_parse_decimal(s, full, &v)) {
		hostmatch_errf(why, why_size,
			       "the prefix length must be a decimal number 0-%u without leading "
			       "zeros",
			       full);
		return -EINVAL;
	}
	e->prefix_len = (uint8_t)(v + (128 - full));
	return 0;
}

static int hostmatch_host_bits_error(struct policy_entry *e, char *why, size_t why_size)
{
	char fixed[POLICY_ENTRY_TEXT_MAX];

	hostmatch_mask(&e->addr, e->prefix_len);
	hostmatch_map_nat64(e);
	if (policy_entry_format(e, fixed, sizeof(fixed)))
		fixed[0] = '\0';
	hostmatch_errf(why, why_size,
		       "host bits are set after the prefix length: did you mean \"%s\"?", fixed);
	return -EINVAL;
}

/* An address or CIDR: host holds at most POLICY_MAX_ENTRY_LENGTH characters. */
static int hostmatch_parse_address(const char *host, bool bracketed, bool model_endpoint,
				   struct policy_entry *e, char *why, size_t why_size)
{
	char addr[POLICY_MAX_ENTRY_LENGTH + 1];
	size_t length = strnlen(host, POLICY_MAX_ENTRY_LENGTH);
	struct in6_addr masked;
	struct in_addr v4;
	bool colon;
	char *slash;
	int ret = 0;

	/* Copied by hand: snprintf's formatting was a fifth of parsing an address. */
	memcpy(addr, host, length);
	addr[length] = '\0';
	slash = strchr(addr, '/');
	if (slash && model_endpoint) {
		hostmatch_errf(why, why_size,
			       "a CIDR is not allowed in model_endpoints (give one host)");
		return -EINVAL;
	}
	if (slash)
		*slash = '\0';
	e->kind = POLICY_ENTRY_ADDRESS;
	e->prefix_len = 128;
	/* IPv6 text always has a colon, IPv4 text never: one inet_pton per address. */
	colon = strchr(addr, ':') != NULL;
	if (colon && inet_pton(AF_INET6, addr, &e->addr) == 1) {
		if (slash)
			ret = hostmatch_parse_prefix(slash + 1, 128, e, why, why_size);
	} else if (!colon && !bracketed && inet_pton(AF_INET, addr, &v4) == 1) {
		e->addr.s6_addr[10] = 0xff;
		e->addr.s6_addr[11] = 0xff;
		memcpy(&e->addr.s6_addr[12], &v4, 4);
		if (slash)
			ret = hostmatch_parse_prefix(slash + 1, 32, e, why, why_size);
	} else if (bracketed && !colon) {
		hostmatch_errf(why, why_size, "brackets are only for IPv6 addresses");
		ret = -EINVAL;
	} else {
		hostmatch_errf(why, why_size, "not a valid %s",
			       (bracketed || colon)
				       ? "IPv6 address (an IPv6 address with a port is written "
					 "[addr]:port)"
				       : "IP address (a prefix length needs one)");
		ret = -EINVAL;
	}
	if (ret)
		return ret;
	masked = e->addr;
	if (hostmatch_mask(&masked, e->prefix_len))
		return hostmatch_host_bits_error(e, why, why_size);
	hostmatch_map_nat64(e);
	if (hostmatch_is_unspecified(e)) {
		hostmatch_errf(why, why_size,
			       "%s is not a destination: a connect to it reaches every local "
			       "listener (name the loopback address: \"127.0.0.1:PORT\" or "
			       "\"[::1]:PORT\")",
			       IN6_IS_ADDR_V4MAPPED(&e->addr) ? "0.0.0.0" : "::");
		return -EINVAL;
	}
	return 0;
}

static int hostmatch_parse_name(const char *host, bool model_endpoint, struct policy_entry *e,
				char *out, char *why, size_t why_size)
{
	const char *name = host;

	e->kind = POLICY_ENTRY_HOSTNAME;
	if (strchr(host, '*')) {
		if (model_endpoint) {
			hostmatch_errf(why, why_size,
				       "a wildcard is not allowed in model_endpoints");
			return -EINVAL;
		}
		if (strcmp(host, "*") == 0) {
			hostmatch_errf(
				why, why_size,
				"\"*\" alone is not an entry (network_mode \"public\" allows "
				"everything)");
			return -EINVAL;
		}
		if (strncmp(host, "*.", 2) != 0 || strchr(host + 2, '*')) {
			hostmatch_errf(why, why_size,
				       "a wildcard is only allowed as the whole first label "
				       "(\"*.example.com\")");
			return -EINVAL;
		}
		name = host + 2;
		e->kind = POLICY_ENTRY_WILDCARD;
		if (!*name || strcmp(name, ".") == 0) {
			hostmatch_errf(
				why, why_size,
				"a wildcard needs a domain after \"*.\" (\"*.example.com\")");
			return -EINVAL;
		}
	}
	e->name = out;
	return hostname_normalize(name, out, POLICY_NAME_SIZE, why, why_size);
}

/*
 * Splits text into host and port. IPv6 takes a port only in brackets: with
 * two colons or more and no bracket, the whole text is an IPv6 address.
 */
static int hostmatch_split(const char *text, char *host, const char **port, bool *bracketed,
			   char *why, size_t why_size)
{
	const char *colon, *close;

	*port = NULL;
	*bracketed = text[0] == '[';
	if (*bracketed) {
		close = strchr(text, ']');
		if (!close) {
			hostmatch_errf(why, why_size, "missing \"]\" after an IPv6 address");
			return -EINVAL;
		}
		if (close[1] && close[1] != ':') {
			hostmatch_errf(why, why_size, "expected \":PORT\" or nothing after \"]\"");
			return -EINVAL;
		}
		memcpy(host, text + 1, (size_t)(close - text - 1));
		host[close - text - 1] = '\0';
		*port = close[1] ? close + 2 : NULL;
		return 0;
	}
	strcpy(host, text);
	colon = strchr(text, ':');
	if (colon && !strchr(colon + 1, ':')) {
		host[colon - text] = '\0';
		*port = colon + 1;
	}
	return 0;
}

static int hostmatch_entry_parse_why(const char *text, bool model_endpoint, struct policy_entry *e,
				     char *name, char *why, size_t why_size)
{
	char host[POLICY_MAX_ENTRY_LENGTH + 1];
	const char *port;
	bool bracketed;
	int ret;

	if (!text[0]) {
		hostmatch_errf(why, why_size, "empty entry");
		return -EINVAL;
	}
	if (strlen(text) > POLICY_MAX_ENTRY_LENGTH) {
		hostmatch_errf(why, why_size, "longer than %d characters (POLICY_MAX_ENTRY_LENGTH)",
			       POLICY_MAX_ENTRY_LENGTH);
		return -EINVAL;
	}
	if (strstr(text, "://")) {
		hostmatch_errf(why, why_size,
			       "a URL is not an entry: give the host (\"example.com\")");
		return -EINVAL;
	}
	ret = hostmatch_split(text, host, &port, &bracketed, why, why_size);
	if (!ret && port)
		ret = hostmatch_parse_port(port, &e->port, why, why_size);
	if (ret)
		return ret;
	if (bracketed || strchr(host, '/') || strchr(host, ':') ||
	    inet_pton(AF_INET, host, &(struct in_addr){0}) == 1)
		return hostmatch_parse_address(host, bracketed, model_endpoint, e, why, why_size);
	return hostmatch_parse_name(host, model_endpoint, e, name, why, why_size);
}

int policy_entry_parse(const char *text, bool model_endpoint, struct policy_entry *out, char *name,
		       char *err, size_t err_size)
{
	char why[HOSTMATCH_WHY_SIZE], quoted[HOSTMATCH_QUOTE_MAX * 4 + 8];
	struct policy_entry e;
	int ret;

	if (!text || !out || !name) {
		hostmatch_errf(err, err_size, "no entry");
		return -EINVAL;
	}
	/* Zeroed whole (padding too): equal entries differ only in where their names are. */
	memset(&e, 0, sizeof(e));
	e.name = "";
	ret = hostmatch_entry_parse_why(text, model_endpoint, &e, name, why, sizeof(why));
	if (ret) {
		hostmatch_quote(text, quoted, sizeof(quoted));
		hostmatch_errf(err, err_size, "%s: %s", quoted, why);
		return ret;
	}
	*out = e;
	return 0;
}

int policy_entry_format(const struct policy_entry *entry, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN + 8];
	bool v6 = false;
	unsigned int plen = 0, full = 0;
	int n;

	if (!entry || !buf || entry->prefix_len > 128)
		return -EINVAL;
	if (entry->kind == POLICY_ENTRY_HOSTNAME || entry->kind == POLICY_ENTRY_WILDCARD) {
		n = snprintf(buf, size, "%s%s", entry->kind == POLICY_ENTRY_WILDCARD ? "*." : "",
			     entry->name);
	} else if (entry->kind == POLICY_ENTRY_ADDRESS) {
		if (hostmatch_addr_is_v4(&entry->addr, entry->prefix_len)) {
			inet_ntop(AF_INET, &entry->addr.s6_addr[12], host, sizeof(host));
			plen = entry->prefix_len - 96u;
			full = 32;
		} else {
			inet_ntop(AF_INET6, &entry->addr, host, sizeof(host));
			plen = entry->prefix_len;
			full = 128;
			v6 = entry->port != 0;
		}
		if (plen != full)
			snprintf(host + strlen(host), 8, "/%u", plen);
		n = snprintf(buf, size, "%s%s%s", v6 ? "[" : "", host, v6 ? "]" : "");
	} else {
		return -EINVAL;
	}
	if (n >= 0 && (size_t)n < size && entry->port)
		n += snprintf(buf + n, size - (size_t)n, ":%u", entry->port);
	return (n < 0 || (size_t)n >= size) ? -ENOSPC : 0;
}
