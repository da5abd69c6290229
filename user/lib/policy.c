// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Policy: parsing and validation of the policy file (docs/design.md "Semantics" and
 * "Policy file", docs/policy.md). A policy is a security boundary written by
 * people: every surprise (unknown key, wrong type, odd entry) is an error that
 * names what was wrong, never a silent guess.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostmatch.h"
#include "policy.h"
#include "policy_internal.h"

/* Room for a quoted entry (truncated) and the reason given for it. */
#define POLICY_WHY_SIZE 512
/* How much of a key or value an error message shows. */
#define POLICY_QUOTE_MAX "64"

static const char *const policy_keys[] = {
	"network_mode",	   "allow_internet", "allowed_hosts",	"allow_model_endpoint",
	"model_endpoints", "allow_loopback", "runtime_network", "sni",
	"tls_ports",	   "http_ports",
};

/* Writes one line: control characters (from file names, JSON errors) become '?'. */
void policy_errf(char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;
	char *p;

	if (!err || !err_size)
		return;
	va_start(ap, fmt);
	vsnprintf(err, err_size, fmt, ap);
	va_end(ap);
	for (p = err; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

const char *policy_mode_name(enum policy_mode mode)
{
	switch (mode) {
	case POLICY_MODE_PUBLIC:
		return "public";
	case POLICY_MODE_NO_NETWORK:
		return "no-network";
	case POLICY_MODE_ALLOWLIST:
		return "allowlist";
	}
	return "unknown";
}

int policy_mode_from_name(const char *name, enum policy_mode *out)
{
	static const enum policy_mode modes[] = {POLICY_MODE_PUBLIC, POLICY_MODE_NO_NETWORK,
						 POLICY_MODE_ALLOWLIST};
	size_t i;

	for (i = 0; name && i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcmp(name, policy_mode_name(modes[i])) == 0) {
			*out = modes[i];
			return 0;
		}
	}
	return -EINVAL;
}

static int policy_check_keys(const json_t *object, char *err, size_t err_size)
{
	/* jansson's iteration API takes a non-const object; nothing is modified. */
	json_t *o = (json_t *)object;
	const char *key;
	size_t i, n = sizeof(policy_keys) / sizeof(policy_keys[0]);
	void *it;

	for (it = json_object_iter(o); it; it = json_object_iter_next(o, it)) {
		key = json_object_iter_key(it);
		for (i = 0; i < n && strcmp(key, policy_keys[i]) != 0; i++)
			;
		if (i < n)
			continue;
		policy_errf(err, err_size,
			    "unknown key \"%." POLICY_QUOTE_MAX "s\" (known: network_mode, "
			    "allow_internet, allowed_hosts, allow_model_endpoint, "
			    "model_endpoints, allow_loopback, runtime_network, sni, tls_ports, "
			    "http_ports)",
			    key);
		return -EINVAL;
	}
	return 0;
}

static int policy_read_bool(const json_t *object, const char *key, bool *out, char *err,
			    size_t err_size)
{
	json_t *value = json_object_get(object, key);

	if (!value)
		return 0;
	if (!json_is_boolean(value)) {
		policy_errf(err, err_size, "%s must be true or false", key);
		return -EINVAL;
	}
	*out = json_is_true(value);
	return 0;
}

static int policy_read_mode(const json_t *object, enum policy_mode *mode, char *err,
			    size_t err_size)
{
	json_t *name = json_object_get(object, "network_mode");
	bool have_legacy = json_object_get(object, "allow_internet") != NULL, internet = false;
	enum policy_mode legacy;

	if (name && !json_is_string(name)) {
		policy_errf(err, err_size,
			    "network_mode must be a string: \"public\", \"no-network\" or "
			    "\"allowlist\"");
		return -EINVAL;
	}
	if (policy_read_bool(object, "allow_internet", &internet, err, err_size))
		return -EINVAL;
	if (!name && !have_legacy) {
		policy_errf(err, err_size,
			    "network_mode is required (\"public\", \"no-network\" or "
			    "\"allowlist\")");
		return -EINVAL;
	}
	legacy = internet ? POLICY_MODE_PUBLIC : POLICY_MODE_NO_NETWORK;
	if (!name) {
		*mode = legacy;
		return 0;
	}
	if (policy_mode_from_name(json_string_value(name), mode)) {
		policy_errf(err, err_size,
			    "network_mode \"%." POLICY_QUOTE_MAX "s\" is not one of \"public\", "
			    "\"no-network\", \"allowlist\"",
			    json_string_value(name));
		return -EINVAL;
	}
	if (have_legacy && *mode != legacy) {
		policy_errf(err, err_size,
			    "allow_internet %s conflicts with network_mode \"%s\" (drop the "
			    "legacy allow_internet)",
			    internet ? "true" : "false", policy_mode_name(*mode));
		return -EINVAL;
	}
	return 0;
}

/*
 * A CIDR of loopback addresses only (inside 127.0.0.0/8, or ::/127). The
 * kernel opens loopback to exact entries only (bpf/bfbpf.bpf.c,
 * policy_verdict()), so that 0.0.0.0/0 never reaches a local relay: without
 * allow_loopback such an entry would allow nothing, and it is refused.
 */
static bool policy_entry_is_loopback_cidr(const struct policy_entry *e)
{
	static const unsigned char v4_loopback[13] = {[10] = 0xff, [11] = 0xff, [12] = 127};

	if (e->kind != POLICY_ENTRY_ADDRESS || e->prefix_len == 128)
		return false;
	if (e->prefix_len == 127 && IN6_IS_ADDR_UNSPECIFIED(&e->addr))
		return true; /* :: and ::1 */
	return e->prefix_len >= 104 && !memcmp(e->addr.s6_addr, v4_loopback, sizeof(v4_loopback));
}

static int policy_read_entry(const json_t *item, const char *key, size_t i, bool model_endpoint,
			     bool allow_loopback, struct policy_entry *e, char *name, char *err,
			     size_t err_size)
{
	char why[POLICY_WHY_SIZE];
	int ret;

	if (!json_is_string(item)) {
		policy_errf(err, err_size, "%s[%zu] must be a string", key, i);
		return -EINVAL;
	}
	if (strlen(json_string_value(item)) != json_string_length(item)) {
		policy_errf(err, err_size, "%s[%zu] contains a NUL character", key, i);
		return -EINVAL;
	}
	ret = policy_entry_parse(json_string_value(item), model_endpoint, e, name, why,
				 sizeof(why));
	if (ret) {
		policy_errf(err, err_size, "%s[%zu] %s", key, i, why);
		return ret;
	}
	if (!allow_loopback && policy_entry_is_loopback_cidr(e)) {
		policy_errf(err, err_size,
			    "%s[%zu] \"%." POLICY_QUOTE_MAX "s\": a CIDR never opens loopback: "
			    "name each loopback address with its port (\"127.0.0.1:4000\"), or "
			    "set allow_loopback",
			    key, i, json_string_value(item));
		return -EINVAL;
	}
	return 0;
}

/* Room for every name the array's strings can hold (a name is never longer than its entry). */
static size_t policy_names_bound(const json_t *array)
{
	size_t bound = 1;

	for (size_t i = 0; i < json_array_size(array); i++)
		bound += json_string_length(json_array_get(array, i)) + 1;
	return bound;
}

static int policy_read_entries(const json_t *object, const char *key, bool model_endpoint,
			       bool allow_loopback, size_t limit, struct policy_entry **out,
			       size_t *n_out, char *err, size_t err_size)
{
	json_t *array = json_object_get(object, key);
	struct policy_entry *v = NULL;
	char *names = NULL, *next;
	size_t n, i;
	int ret = 0;

	if (!array)
		return 0;
	if (!json_is_array(array)) {
		policy_errf(err, err_size, "%s must be an array of strings", key);
		return -EINVAL;
	}
	n = json_array_size(array);
	if (n > limit) {
		policy_errf(err, err_size, "%s has %zu entries; the limit is %zu", key, n, limit);
		return -EINVAL;
	}
	if (n == 0)
		return 0;
	/* Scratch: the names land here as they are parsed, then are packed with the entries. */
	v = malloc(n * sizeof(*v));
	names = malloc(policy_names_bound(array));
	if (!v || !names) {
		policy_errf(err, err_size, "out of memory for %zu %s", n, key);
		ret = -ENOMEM;
		goto cleanup;
	}
	next = names;
	for (i = 0; i < n; i++) {
		char name[POLICY_NAME_SIZE];

		ret = policy_read_entry(json_array_get(array, i), key, i, model_endpoint,
					allow_loopback, &v[i], name, err, err_size);
		if (ret)
			goto cleanup;
		if (v[i].name[0]) {
			size_t size = strlen(name) + 1;

			memcpy(next, name, size);
			v[i].name = next;
			next += size;
		}
	}
	n = policy_entries_dedup(v, n);
	*out = policy_entries_pack(v, n);
	if (!*out) {
		policy_errf(err, err_size, "out of memory for %zu %s", n, key);
		ret = -ENOMEM;
		goto cleanup;
	}
	*n_out = n;
cleanup:
	free(v);
	free(names);
	return ret;
}

static size_t policy_count_names(const struct policy *policy)
{
	size_t names = 0;

	for (size_t i = 0; i < policy->n_allowed_hosts; i++)
		names += policy->allowed_hosts[i].kind == POLICY_ENTRY_HOSTNAME;
	for (size_t i = 0; i < policy->n_model_endpoints; i++)
		names += policy->model_endpoints[i].kind == POLICY_ENTRY_HOSTNAME;
	return names;
}

int policy_from_json(const json_t *object, struct policy *out, char *err, size_t err_size)
{
	return policy_from_json_loopback(object, true, out, err, err_size);
}

int policy_from_json_loopback(const json_t *object, bool allow_loopback, struct policy *out,
			      char *err, size_t err_size)
{
	struct policy p = {.allow_loopback = allow_loopback, .allow_model_endpoint = true};
	int ret;

	if (!json_is_object(object) || !out) {
		policy_errf(err, err_size, "the policy must be a JSON object (\"{...}\")");
		return -EINVAL;
	}
	ret = policy_check_keys(object, err, err_size);
	if (!ret)
		ret = policy_read_mode(object, &p.mode, err, err_size);
	if (!ret)
		ret = policy_read_bool(object, "allow_loopback", &p.allow_loopback, err, err_size);
	if (!ret)
		ret = policy_read_bool(object, "allow_model_endpoint", &p.allow_model_endpoint, err,
				       err_size);
	if (!ret)
		ret = policy_read_bool(object, "runtime_network", &p.runtime_network, err,
				       err_size);
	if (!ret)
		ret = policy_read_entries(object, "allowed_hosts", false, p.allow_loopback,
					  POLICY_MAX_ALLOWED_HOSTS, &p.allowed_hosts,
					  &p.n_allowed_hosts, err, err_size);
	if (!ret)
		ret = policy_read_entries(object, "model_endpoints", true, p.allow_loopback,
					  POLICY_MAX_MODEL_ENDPOINTS, &p.model_endpoints,
					  &p.n_model_endpoints, err, err_size);
	if (ret)
		goto cleanup;
	if (p.mode != POLICY_MODE_ALLOWLIST && p.n_allowed_hosts) {
		/* Accepting them would let a task believe it is confined to them. */
		policy_errf(err, err_size, "allowed_hosts has no effect in %s mode%s",
			    policy_mode_name(p.mode),
			    p.mode == POLICY_MODE_PUBLIC ? " (everything is allowed)" : "");
		ret = -EINVAL;
		goto cleanup;
	}
	if (p.mode != POLICY_MODE_ALLOWLIST && p.runtime_network) {
		policy_errf(err, err_size, "runtime_network has no effect in %s mode",
			    policy_mode_name(p.mode));
		ret = -EINVAL;
		goto cleanup;
	}
	ret = policy_sni_read(object, &p, err, err_size);
	if (ret)
		goto cleanup;
	if (policy_count_names(&p) > POLICY_MAX_NAMES) {
		/* Each name is resolved (twice per TTL) for as long as the policy lives. */
		policy_errf(err, err_size,
			    "more than %d host names (POLICY_MAX_NAMES); use CIDRs or "
			    "wildcards for large sets",
			    POLICY_MAX_NAMES);
		ret = -EINVAL;
		goto cleanup;
	}
	*out = p;
	return 0;
cleanup:
	policy_free(&p);
	return ret;
}

static int policy_parse_loopback(const char *text, size_t length, bool allow_loopback,
				 struct policy *out, char *err, size_t err_size)
{
	json_error_t jerr;
	json_t *root;
	int ret;

	if (!text || !out) {
		policy_errf(err, err_size, "no policy text");
		return -EINVAL;
	}
	if (length > POLICY_MAX_JSON_BYTES) {
		policy_errf(err, err_size, "the policy is %zu bytes; the limit is %d", length,
			    POLICY_MAX_JSON_BYTES);
		return -EINVAL;
	}
	/* A key given twice is ambiguous in a security policy: refuse it. */
	root = json_loadb(text, length, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		policy_errf(err, err_size, "invalid JSON (line %d, column %d): %s", jerr.line,
			    jerr.column, jerr.text);
		return json_error_code(&jerr) == json_error_out_of_memory ? -ENOMEM : -EINVAL;
	}
	ret = policy_from_json_loopback(root, allow_loopback, out, err, err_size);
	json_decref(root);
	return ret;
}

int policy_parse(const char *text, size_t length, struct policy *out, char *err, size_t err_size)
{
	return policy_parse_loopback(text, length, true, out, err, err_size);
}

/* Reads a whole file (a pipe too), at most POLICY_MAX_JSON_BYTES + 1 bytes. */
static int policy_read_file(FILE *f, char **out, size_t *len)
{
	size_t cap = 4096, n = 0, got;
	char *buf = NULL, *grown;

	for (;;) {
		grown = realloc(buf, cap);
		if (!grown) {
			free(buf);
			return -ENOMEM;
		}
		buf = grown;
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n < cap || n > POLICY_MAX_JSON_BYTES)
			break;
		cap = cap * 2 > POLICY_MAX_JSON_BYTES + 1 ? POLICY_MAX_JSON_BYTES + 1 : cap * 2;
	}
	if (ferror(f)) {
		free(buf);
		return errno ? -errno : -EIO;
	}
	*out = buf;
	*len = n;
	return 0;
}

int policy_load_file(const char *path, struct policy *out, char *err, size_t err_size)
{
	return policy_load_file_loopback(path, true, out, err, err_size);
}

int policy_load_file_loopback(const char *path, bool allow_loopback, struct policy *out, char *err,
			      size_t err_size)
{
	char why[POLICY_WHY_SIZE + 64];
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	f = path ? fopen(path, "re") : NULL;
	if (!f) {
		ret = path ? -errno : -EINVAL;
		policy_errf(err, err_size, "%s: %s", path ? path : "(null)", strerror(-ret));
		return ret;
	}
	errno = 0;
	ret = policy_read_file(f, &text, &len);
	fclose(f);
	if (ret) {
		policy_errf(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (len > POLICY_MAX_JSON_BYTES) {
		policy_errf(err, err_size, "%s: larger than %d bytes (POLICY_MAX_JSON_BYTES)", path,
			    POLICY_MAX_JSON_BYTES);
		free(text);
		return -EINVAL;
	}
	ret = policy_parse_loopback(text, len, allow_loopback, out, why, sizeof(why));
	if (ret)
		policy_errf(err, err_size, "%s: %s", path, why);
	free(text);
	return ret;
}

void policy_free(struct policy *policy)
{
	if (!policy)
		return;
	free(policy->allowed_hosts);
	free(policy->model_endpoints);
	policy->allowed_hosts = NULL;
	policy->model_endpoints = NULL;
	policy->n_allowed_hosts = 0;
	policy->n_model_endpoints = 0;
}

static int policy_strcmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Entries as text, sorted with strcmp and without duplicates: one spelling per policy. */
static json_t *policy_entries_to_json(const struct policy_entry *v, size_t n)
{
	char buf[POLICY_ENTRY_TEXT_MAX], **texts = calloc(n ? n : 1, sizeof(char *));
	json_t *array = json_array();
	size_t i;
	bool ok = texts && array;

	for (i = 0; ok && i < n; i++) {
		ok = policy_entry_format(&v[i], buf, sizeof(buf)) == 0;
		texts[i] = ok ? strdup(buf) : NULL;
		ok = ok && texts[i];
	}
	if (ok)
		qsort(texts, n, sizeof(*texts), policy_strcmp);
	for (i = 0; ok && i < n; i++)
		if (i == 0 || strcmp(texts[i], texts[i - 1]) != 0)
			ok = json_array_append_new(array, json_string(texts[i])) == 0;
	for (i = 0; texts && i < n; i++)
		free(texts[i]);
	free(texts);
	if (!ok) {
		json_decref(array);
		return NULL;
	}
	return array;
}

json_t *policy_to_json(const struct policy *policy)
{
	json_t *o;
	int bad = 0;

	if (!policy)
		return NULL;
	o = json_object();
	if (!o)
		return NULL;
	/* json_object_set_new() consumes the value even when it fails. */
	bad |= json_object_set_new(o, "network_mode", json_string(policy_mode_name(policy->mode)));
	bad |= json_object_set_new(
		o, "allowed_hosts",
		policy_entries_to_json(policy->allowed_hosts, policy->n_allowed_hosts));
	bad |= json_object_set_new(o, "allow_model_endpoint",
				   json_boolean(policy->allow_model_endpoint));
	bad |= json_object_set_new(
		o, "model_endpoints",
		policy_entries_to_json(policy->model_endpoints, policy->n_model_endpoints));
	bad |= json_object_set_new(o, "allow_loopback", json_boolean(policy->allow_loopback));
	/* Shown when asked for only: policies without it read back as they were written. */
	if (policy->runtime_network)
		bad |= json_object_set_new(o, "runtime_network", json_true());
	bad |= policy_sni_to_json(policy, o);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}
