// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Names bound to TLS (issue 20, docs/policy.md "Names bound to TLS"): the
 * policy fields "sni", "tls_ports" and "http_ports". Zero values of struct
 * policy are the defaults, so that a policy built in code gets the rule.
 * The canonical form and the digest carry them only when they differ from
 * the defaults: a policy that never names them keeps its earlier digest.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnv.h"
#include "policy.h"
#include "policy_internal.h"

static const uint16_t policy_sni_default_tls[] = {443};
static const uint16_t policy_sni_default_http[] = {80};

bool policy_sni_enforced(const struct policy *policy)
{
	return !policy->sni_off && policy->mode != POLICY_MODE_PUBLIC;
}

const uint16_t *policy_sni_ports(const struct policy *policy, bool tls, size_t *count)
{
	if (tls) {
		*count = policy->tls_ports_given ? policy->n_tls_ports : 1;
		return policy->tls_ports_given ? policy->tls_ports : policy_sni_default_tls;
	}
	*count = policy->http_ports_given ? policy->n_http_ports : 1;
	return policy->http_ports_given ? policy->http_ports : policy_sni_default_http;
}

static int policy_sni_port_compare(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

/* A list of ports: integers 1..65535, unique, at most POLICY_MAX_SNI_PORTS. */
static int policy_sni_read_ports(const json_t *object, const char *key, uint16_t *ports,
				 uint8_t *count, bool *given, char *err, size_t err_size)
{
	json_t *array = json_object_get(object, key), *item;
	size_t i;

	if (!array)
		return 0;
	if (!json_is_array(array)) {
		policy_errf(err, err_size, "%s must be an array of port numbers (1-65535)", key);
		return -EINVAL;
	}
	if (json_array_size(array) > POLICY_MAX_SNI_PORTS) {
		policy_errf(err, err_size, "%s has %zu ports; the limit is %d", key,
			    json_array_size(array), POLICY_MAX_SNI_PORTS);
		return -EINVAL;
	}
	json_array_foreach(array, i, item)
	{
		json_int_t port = json_is_integer(item) ? json_integer_value(item) : -1;

		if (port < 1 || port > 65535) {
			policy_errf(err, err_size, "%s[%zu] must be a port number (1-65535)", key,
				    i);
			return -EINVAL;
		}
		ports[i] = (uint16_t)port;
	}
	*count = (uint8_t)json_array_size(array);
	qsort(ports, *count, sizeof(*ports), policy_sni_port_compare);
	for (i = 1; i < *count; i++) {
		if (ports[i] == ports[i - 1]) {
			policy_errf(err, err_size, "%s lists port %u twice", key, ports[i]);
			return -EINVAL;
		}
	}
	*given = true;
	return 0;
}

static int policy_sni_read_mode(const json_t *object, bool *off, char *err, size_t err_size)
{
	json_t *value = json_object_get(object, "sni");
	const char *text = json_is_string(value) ? json_string_value(value) : NULL;

	if (!value)
		return 0;
	if (text && !strcmp(text, "enforce")) {
		*off = false;
		return 0;
	}
	if (text && !strcmp(text, "off")) {
		*off = true;
		return 0;
	}
	if (text)
		policy_errf(err, err_size, "sni \"%.64s\" is not one of \"enforce\", \"off\"",
			    text);
	else
		policy_errf(err, err_size, "sni must be a string: \"enforce\" or \"off\"");
	return -EINVAL;
}

int policy_sni_read(const json_t *object, struct policy *out, char *err, size_t err_size)
{
	struct policy p = *out;
	size_t n_tls, n_http;
	const uint16_t *tls, *http;
	int ret;

	p.sni_off = false;
	p.tls_ports_given = p.http_ports_given = false;
	p.n_tls_ports = p.n_http_ports = 0;
	ret = policy_sni_read_mode(object, &p.sni_off, err, err_size);
	if (!ret)
		ret = policy_sni_read_ports(object, "tls_ports", p.tls_ports, &p.n_tls_ports,
					    &p.tls_ports_given, err, err_size);
	if (!ret)
		ret = policy_sni_read_ports(object, "http_ports", p.http_ports, &p.n_http_ports,
					    &p.http_ports_given, err, err_size);
	if (ret)
		return ret;
	if (p.mode == POLICY_MODE_PUBLIC &&
	    (json_object_get(object, "sni") || p.tls_ports_given || p.http_ports_given)) {
		/* Accepting them would let a task believe something is judged. */
		policy_errf(err, err_size,
			    "sni, tls_ports and http_ports have no effect in public mode "
			    "(everything is allowed)");
		return -EINVAL;
	}
	tls = policy_sni_ports(&p, true, &n_tls);
	http = policy_sni_ports(&p, false, &n_http);
	for (size_t i = 0; i < n_tls; i++) {
		for (size_t j = 0; j < n_http; j++) {
			if (tls[i] != http[j])
				continue;
			policy_errf(err, err_size,
				    "port %u is in both tls_ports and http_ports (a flow "
				    "is judged as one or the other)",
				    tls[i]);
			return -EINVAL;
		}
	}
	*out = p;
	return 0;
}

static json_t *policy_sni_ports_json(const uint16_t *ports, size_t count)
{
	json_t *array = json_array();

	for (size_t i = 0; array && i < count; i++) {
		if (json_array_append_new(array, json_integer(ports[i]))) {
			json_decref(array);
			return NULL;
		}
	}
	return array;
}

int policy_sni_to_json(const struct policy *policy, json_t *object)
{
	int bad = 0;

	if (policy->sni_off)
		bad |= json_object_set_new(object, "sni", json_string("off"));
	if (policy->tls_ports_given)
		bad |= json_object_set_new(
			object, "tls_ports",
			policy_sni_ports_json(policy->tls_ports, policy->n_tls_ports));
	if (policy->http_ports_given)
		bad |= json_object_set_new(
			object, "http_ports",
			policy_sni_ports_json(policy->http_ports, policy->n_http_ports));
	return bad ? -1 : 0;
}

uint64_t policy_sni_digest(const struct policy *policy, uint64_t h)
{
	static const char tag_off[] = "sni off", tag_tls[] = "tls_ports", tag_http[] = "http_ports";

	if (policy->sni_off)
		h = fnv_update(h, tag_off, sizeof(tag_off));
	if (policy->tls_ports_given) {
		h = fnv_update(h, tag_tls, sizeof(tag_tls));
		h = fnv_update(h, &policy->n_tls_ports, 1);
		h = fnv_update(h, policy->tls_ports,
			       policy->n_tls_ports * sizeof(policy->tls_ports[0]));
	}
	if (policy->http_ports_given) {
		h = fnv_update(h, tag_http, sizeof(tag_http));
		h = fnv_update(h, &policy->n_http_ports, 1);
		h = fnv_update(h, policy->http_ports,
			       policy->n_http_ports * sizeof(policy->http_ports[0]));
	}
	return h;
}
