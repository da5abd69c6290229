/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Policy: parsing and validation of the policy file (docs/design.md, docs/policy.md). */
#ifndef BFBPF_POLICY_H
#define BFBPF_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <jansson.h>

/* Documented limits (docs/policy.md); exceeding one is a parse error. */
#define POLICY_MAX_ALLOWED_HOSTS 100000
#define POLICY_MAX_MODEL_ENDPOINTS 64
#define POLICY_MAX_NAMES 4096 /* host names (resolved by the daemon) per policy */
#define POLICY_MAX_ENTRY_LENGTH 300
#define POLICY_MAX_JSON_BYTES (16 << 20)
#define HOSTNAME_MAX_LENGTH 253
#define HOSTNAME_MAX_LABEL 63
/* A buffer of this size holds any policy_entry_format() text ("*." name ":65535"). */
#define POLICY_ENTRY_TEXT_MAX 272

enum policy_mode {
	POLICY_MODE_PUBLIC,
	POLICY_MODE_NO_NETWORK,
	POLICY_MODE_ALLOWLIST,
};

enum policy_entry_kind {
	POLICY_ENTRY_ADDRESS,  /* an address or CIDR: addr/prefix_len */
	POLICY_ENTRY_HOSTNAME, /* a name: the name and every subdomain */
	POLICY_ENTRY_WILDCARD, /* "*.name": every subdomain, never the apex */
};

/* Room for a normalised host name and its terminator. */
#define POLICY_NAME_SIZE (HOSTNAME_MAX_LENGTH + 1)

/*
 * 32 bytes: a thousand sandboxes of 100 entries, or one policy of 100,000,
 * must not cost a name buffer per address.
 */
struct policy_entry {
	/*
	 * HOSTNAME and WILDCARD: normalised name (lower case, no trailing dot,
	 * without the "*." of a wildcard); "" for an ADDRESS. In a parsed
	 * policy it points into the allocation of the entry array (the names
	 * follow the entries); policy_entry_parse() points it at the caller's
	 * buffer.
	 */
	const char *name;
	/* ADDRESS: IPv4 stored as ::ffff:a.b.c.d; prefix_len counts in the
	 * 128-bit space (an IPv4 /24 is 120). Host bits are never set. */
	struct in6_addr addr;
	enum policy_entry_kind kind;
	uint8_t prefix_len;
	uint16_t port; /* 0: every port */
};

/* Ports at most in each of tls_ports and http_ports (docs/policy.md "Names bound to TLS"). */
#define POLICY_MAX_SNI_PORTS 16

struct policy {
	enum policy_mode mode;
	bool allow_loopback;	   /* default true (false for bfbpf run) */
	bool allow_model_endpoint; /* default true */
	/*
	 * Default false. Allowlist: names the policy does not list, single-label
	 * or under the runtime's search domains, go to the container runtime's
	 * resolver; only answers inside the sandbox netns's own connected subnets
	 * count (docs/policy.md "runtime_network").
	 */
	bool runtime_network;
	/* Sorted (policy order) and unique; each array is one allocation with its names. */
	size_t n_allowed_hosts;
	struct policy_entry *allowed_hosts;
	size_t n_model_endpoints;
	struct policy_entry *model_endpoints;
	/*
	 * Issue 20, names bound to TLS (policy_sni.c). Zero is the default, so
	 * that a policy built in code gets it: sni "enforce", tls_ports [443],
	 * http_ports [80]. Read the ports with policy_sni_ports().
	 */
	bool sni_off;	       /* "sni": "off": address-only judging */
	bool tls_ports_given;  /* tls_ports was in the file (else [443]) */
	bool http_ports_given; /* http_ports was in the file (else [80]) */
	uint8_t n_tls_ports, n_http_ports;
	uint16_t tls_ports[POLICY_MAX_SNI_PORTS];  /* sorted, unique, 1..65535 */
	uint16_t http_ports[POLICY_MAX_SNI_PORTS]; /* sorted, unique, none in tls_ports */
};

/* The two lists of entries a policy holds. */
enum policy_list {
	POLICY_LIST_HOSTS, /* allowed_hosts: the task's entries */
	POLICY_LIST_LANE,  /* model_endpoints: the runner's model lane */
	POLICY_LIST_COUNT,
};

/*
 * Which entries of a policy are in force: the one statement of the project's
 * security rule (docs/policy.md). Every layer that programs, resolves, answers
 * or shows entries asks here instead of reading mode and flags itself.
 * - public: none (everything is allowed; no entry adds anything);
 * - allowlist: allowed_hosts, and the lane unless allow_model_endpoint is false;
 * - no-network: the lane unless allow_model_endpoint is false.
 */
bool policy_list_in_force(const struct policy *policy, enum policy_list list);
/* The entries of list that are in force: the list itself, or NULL and *count 0. */
const struct policy_entry *policy_in_force(const struct policy *policy, enum policy_list list,
					   size_t *count);
/*
 * Does this entry of list allow this normalised name? An allowed_hosts name
 * allows itself and its subdomains, a wildcard its subdomains; a lane name
 * allows itself only (the lane is for the runner's endpoints, not a domain).
 */
bool policy_entry_allows_name(enum policy_list list, const struct policy_entry *entry,
			      const char *name);
/*
 * Does an entry in force allow this name (any case, trailing dot ignored; an
 * invalid name never)? Public mode: no entry is in force, so none does.
 */
bool policy_allows_name(const struct policy *policy, const char *name);

/*
 * Parse a policy object. On error returns -EINVAL (or -ENOMEM) and writes one
 * line naming the bad key or entry into err; *out is then untouched.
 */
int policy_from_json(const json_t *object, struct policy *out, char *err, size_t err_size);
/* Same, from text (a file's content). */
int policy_parse(const char *text, size_t length, struct policy *out, char *err, size_t err_size);
/* Read and parse a policy file. */
int policy_load_file(const char *path, struct policy *out, char *err, size_t err_size);
/*
 * The same two with allow_loopback's default given: true for attach and
 * update (the contract), false for bfbpf run, which opens loopback only where
 * the policy says so (a local relay carries bytes anywhere).
 */
int policy_from_json_loopback(const json_t *object, bool allow_loopback, struct policy *out,
			      char *err, size_t err_size);
int policy_load_file_loopback(const char *path, bool allow_loopback, struct policy *out, char *err,
			      size_t err_size);
void policy_free(struct policy *policy);

/* Canonical JSON (entries normalised and sorted, defaults explicit). New reference. */
json_t *policy_to_json(const struct policy *policy);
/*
 * 64-bit FNV-1a of the canonical policy in binary form (docs/policy.md):
 * detects drift, not adversaries. Equal canonical JSON, equal digest.
 */
uint64_t policy_digest(const struct policy *policy);
/*
 * The digest of earlier versions: FNV-1a of the canonical JSON text. Only to
 * recognise what an older daemon programmed (re-adoption after an upgrade).
 */
uint64_t policy_digest_legacy(const struct policy *policy);

/*
 * Names bound to TLS (policy_sni.c). Is the rule on: "sni" not "off", in a
 * mode with entries in force (allowlist, or no-network with a lane)?
 */
bool policy_sni_enforced(const struct policy *policy);
/* The ports judged, defaults applied: tls (true) or http (false). */
const uint16_t *policy_sni_ports(const struct policy *policy, bool tls, size_t *count);
/* Reads "sni", "tls_ports", "http_ports" of a policy object into out (already parsed mode). */
int policy_sni_read(const json_t *object, struct policy *out, char *err, size_t err_size);
/* Adds the non-default ones to a canonical object; -1 on failure. */
int policy_sni_to_json(const struct policy *policy, json_t *object);
/* Mixes the non-default ones into a digest (a default policy's digest is unchanged). */
uint64_t policy_sni_digest(const struct policy *policy, uint64_t h);

/* A deep copy (its own entry arrays, names packed in them). */
int policy_copy(const struct policy *policy, struct policy *out);

/*
 * One entry of allowed_hosts (model_endpoint false) or model_endpoints (true).
 * A name is written into name (POLICY_NAME_SIZE bytes), which out->name then
 * points at; an address gets "".
 */
int policy_entry_parse(const char *text, bool model_endpoint, struct policy_entry *out, char *name,
		       char *err, size_t err_size);
/* Format an entry back into policy syntax ("[2001:db8::/32]:443"). */
int policy_entry_format(const struct policy_entry *entry, char *buf, size_t size);

const char *policy_mode_name(enum policy_mode mode);
int policy_mode_from_name(const char *name, enum policy_mode *out);

#endif /* BFBPF_POLICY_H */
