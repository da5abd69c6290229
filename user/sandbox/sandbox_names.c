// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What a sandbox's names contribute to its allow set, and how status shows them. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dns/resolver.h"
#include "dns/responder.h"
#include "sandbox.h"
#include "sandbox_netns.h"

bool sandbox_names_settled(struct sandbox_registry *registry, struct sandbox *sandbox)
{
	/* Once settled, settled until the policy changes (names never unresolve). */
	if (!registry->resolver || !sandbox->policy_known || sandbox->names_settled)
		return true;
	sandbox->names_settled = resolver_policy_settled(registry->resolver, &sandbox->policy);
	return sandbox->names_settled;
}

/*
 * 0.0.0.0 or ::: a connect to it reaches every local listener, and a blocking
 * resolver answers it for "no". Never programmed for a name, the lane's too
 * (as an entry it is refused, docs/policy.md "Loopback").
 */
static bool sandbox_address_unspecified(const struct in6_addr *addr)
{
	static const unsigned char mapped_zero[16] = {[10] = 0xff, [11] = 0xff};

	return IN6_IS_ADDR_UNSPECIFIED(addr) || !memcmp(addr, mapped_zero, sizeof(mapped_zero));
}

/* Adds a name entry's current addresses; allowed_hosts names pass the range filter. */
static int sandbox_add_name(const struct sandbox_registry *registry,
			    const struct policy_entry *entry, bool filtered,
			    const struct allowset *literals, struct allowset *set)
{
	struct names_entry *name = names_find(resolver_names(registry->resolver), entry->name);
	int err;

	for (size_t i = 0; name && i < name->count; i++) {
		struct allowset_entry allowed = {.prefix_len = 128, .port = entry->port};

		memcpy(allowed.addr, &name->addresses[i].addr, 16);
		if (sandbox_address_unspecified(&name->addresses[i].addr) ||
		    (filtered &&
		     names_address_is_dropped(&name->addresses[i].addr, literals, entry->port)))
			continue;
		err = allowset_add(set, &allowed);
		if (err)
			return err;
	}
	return 0;
}

/* A learned name's addresses, under every entry that allows the name (with its port). */
static int sandbox_add_learned(const struct sandbox_registry *registry, const struct policy *policy,
			       const char *name, const struct allowset *literals,
			       struct allowset *set)
{
	struct policy_entry as_entry = {.kind = POLICY_ENTRY_HOSTNAME, .name = name};
	int err = 0;

	/* allowed_hosts names pass the range filter; the lane's are exempt. */
	for (int list = 0; !err && list < POLICY_LIST_COUNT; list++) {
		size_t count;
		const struct policy_entry *entries = policy_in_force(policy, list, &count);

		for (size_t i = 0; !err && i < count; i++) {
			if (!policy_entry_allows_name(list, &entries[i], name))
				continue;
			as_entry.port = entries[i].port;
			err = sandbox_add_name(registry, &as_entry, list == POLICY_LIST_HOSTS,
					       literals, set);
		}
	}
	return err;
}

int sandbox_allowset_compute(const struct sandbox_registry *registry, const struct policy *policy,
			     const struct sandbox_learned *learned, size_t learned_count,
			     struct allowset *out)
{
	struct allowset set = {0}, literals = {0};
	int err;

	err = allowset_from_policy(policy, &literals);
	if (err)
		return err;
	/* The literals, then what names add (often nothing: the set is then sorted already). */
	err = allowset_copy(&literals, &set);
	if (err)
		goto cleanup;
	/* The lane comes from the runner, not the task: exempt from the range filter. */
	for (int list = 0; registry->resolver && list < POLICY_LIST_COUNT; list++) {
		size_t count;
		const struct policy_entry *entries = policy_in_force(policy, list, &count);

		for (size_t i = 0; i < count; i++) {
			if (!resolver_policy_entry_is_name(&entries[i]))
				continue;
			err = sandbox_add_name(registry, &entries[i], list == POLICY_LIST_HOSTS,
					       &literals, &set);
			if (err)
				goto cleanup;
		}
	}
	for (size_t i = 0; registry->resolver && i < learned_count; i++) {
		err = sandbox_add_learned(registry, policy, learned[i].name, &literals, &set);
		if (err)
			goto cleanup;
	}
	allowset_normalize(&set);
	allowset_trim(&set);
	*out = set;
	allowset_free(&literals);
	return 0;
cleanup:
	allowset_free(&set);
	allowset_free(&literals);
	return err;
}

static json_t *sandbox_time_json(uint64_t seconds)
{
	return seconds ? json_integer((json_int_t)seconds) : json_null();
}

static json_t *sandbox_name_json(struct sandbox_registry *registry,
				 const struct policy_entry *entry, bool filtered,
				 const struct allowset *literals)
{
	struct names_entry *name = names_find(resolver_names(registry->resolver), entry->name);
	json_t *addresses = json_array(), *dropped = json_array();
	char text[INET6_ADDRSTRLEN];

	for (size_t i = 0; name && i < name->count; i++) {
		const struct in6_addr *addr = &name->addresses[i].addr;

		if (IN6_IS_ADDR_V4MAPPED(addr))
			inet_ntop(AF_INET, &addr->s6_addr[12], text, sizeof(text));
		else
			inet_ntop(AF_INET6, addr, text, sizeof(text));
		if (sandbox_address_unspecified(addr) ||
		    (filtered && names_address_is_dropped(addr, literals, entry->port)))
			json_array_append_new(dropped, json_string(text));
		else
			json_array_append_new(addresses, json_string(text));
	}
	return json_pack("{s:s, s:s, s:o, s:o, s:b, s:b, s:o, s:o, s:o, s:o}", "name", entry->name,
			 "role", filtered ? "allowed_host" : "model_endpoint", "addresses",
			 addresses, "filtered", dropped, "resolved", name && name->resolved_once,
			 "truncated", name && name->truncated, "last_error",
			 name && name->last_error ? json_string(name->last_error_text)
						  : json_null(),
			 "last_success", sandbox_time_json(name ? name->last_success : 0),
			 "last_attempt", sandbox_time_json(name ? name->last_attempt : 0),
			 "next_refresh", sandbox_time_json(name ? name->next_refresh : 0));
}

/* Does the policy name any host at all? (Most large policies are addresses only.) */
static bool sandbox_policy_has_names(const struct policy *policy)
{
	for (size_t i = 0; i < policy->n_allowed_hosts; i++)
		if (resolver_policy_entry_is_name(&policy->allowed_hosts[i]))
			return true;
	for (size_t i = 0; i < policy->n_model_endpoints; i++)
		if (resolver_policy_entry_is_name(&policy->model_endpoints[i]))
			return true;
	return false;
}

json_t *sandbox_names_to_json(struct sandbox_registry *registry, const struct sandbox *sandbox)
{
	const struct policy *policy = &sandbox->policy;
	struct allowset literals = {0};
	json_t *list = json_array();

	if (!sandbox_policy_has_names(policy))
		return list;
	allowset_from_policy(policy, &literals);
	for (int which = 0; which < POLICY_LIST_COUNT; which++) {
		size_t count;
		const struct policy_entry *entries = policy_in_force(policy, which, &count);

		for (size_t i = 0; i < count; i++)
			if (resolver_policy_entry_is_name(&entries[i]))
				json_array_append_new(list,
						      sandbox_name_json(registry, &entries[i],
									which == POLICY_LIST_HOSTS,
									&literals));
	}
	allowset_free(&literals);
	return list;
}

/* Names of the policy that have no address programmed (after the range filter). */
json_t *sandbox_names_unresolved(struct sandbox_registry *registry, const struct sandbox *sandbox)
{
	json_t *names = sandbox_names_to_json(registry, sandbox), *item, *unresolved = json_array();
	size_t i;

	json_array_foreach(names, i, item) if (!json_array_size(json_object_get(item, "addresses")))
		json_array_append(unresolved, json_object_get(item, "name"));
	json_decref(names);
	return unresolved;
}

int sandbox_expected_allowset(struct sandbox_registry *registry, struct sandbox *sandbox,
			      struct allowset *out)
{
	int err = sandbox_allowset_compute(registry, &sandbox->policy, sandbox->learned,
					   sandbox->learned_count, out);

	if (!err)
		err = sandbox_runtime_add(sandbox, &sandbox->policy, out);

	/*
	 * While some of the policy's names have not answered yet (after a restart,
	 * say), what the maps hold stays: answers add, they do not yet take away.
	 */
	if (err || sandbox_names_settled(registry, sandbox))
		return err;
	for (size_t i = 0; i < sandbox->applied.count && !err; i++)
		err = allowset_add(out, &sandbox->applied.entries[i]);
	if (err) {
		allowset_free(out);
		return err;
	}
	allowset_normalize(out);
	return 0;
}

int sandbox_learn(struct sandbox_registry *registry, struct sandbox *sandbox, const char *name,
		  bool *added)
{
	size_t oldest = 0;
	int err;

	*added = false;
	for (size_t i = 0; i < sandbox->learned_count; i++) {
		if (!strcmp(sandbox->learned[i].name, name)) {
			sandbox->learned[i].last_used = time(NULL);
			return 0;
		}
		if (sandbox->learned[i].last_used < sandbox->learned[oldest].last_used)
			oldest = i;
	}
	if (!sandbox->learned) {
		sandbox->learned = calloc(RESPONDER_MAX_LEARNED, sizeof(*sandbox->learned));
		if (!sandbox->learned)
			return -ENOMEM;
	}
	err = names_ref(resolver_names(registry->resolver), name, NULL);
	if (err)
		return err;
	if (sandbox->learned_count == RESPONDER_MAX_LEARNED) {
		/* The least recently used learned name goes; policy entries never do. */
		names_unref(resolver_names(registry->resolver), sandbox->learned[oldest].name);
		sandbox->learned[oldest] = sandbox->learned[--sandbox->learned_count];
	}
	snprintf(sandbox->learned[sandbox->learned_count].name, sizeof(sandbox->learned[0].name),
		 "%s", name);
	sandbox->learned[sandbox->learned_count++].last_used = time(NULL);
	sandbox->needs_refresh = true;
	*added = true;
	return 0;
}

/* Learned names the (new) policy no longer allows are forgotten. */
void sandbox_learned_prune(struct sandbox_registry *registry, struct sandbox *sandbox)
{
	size_t kept = 0;

	for (size_t i = 0; i < sandbox->learned_count; i++) {
		/* Allowed iff some entry in force would program its addresses (public: all). */
		bool allowed = sandbox->policy.mode == POLICY_MODE_PUBLIC ||
			       policy_allows_name(&sandbox->policy, sandbox->learned[i].name);

		if (allowed) {
			sandbox->learned[kept++] = sandbox->learned[i];
			continue;
		}
		if (registry->resolver)
			names_unref(resolver_names(registry->resolver), sandbox->learned[i].name);
	}
	sandbox->learned_count = kept;
}

/* A name's current addresses that its entry programs (the same filters as sandbox_add_name). */
static size_t sandbox_name_addresses(const struct sandbox_registry *registry,
				     const char *entry_name, uint16_t port, bool filtered,
				     const struct allowset *literals, struct in6_addr *out)
{
	struct names_entry *name = names_find(resolver_names(registry->resolver), entry_name);
	size_t n = 0;

	for (size_t i = 0; name && i < name->count && i < NAMES_MAX_ADDRESSES; i++) {
		const struct in6_addr *addr = &name->addresses[i].addr;

		if (sandbox_address_unspecified(addr) ||
		    (filtered && names_address_is_dropped(addr, literals, port)))
			continue;
		out[n++] = *addr;
	}
	return n;
}

/* The SNI keys of one list's entries in force (docs/policy.md "Names bound to TLS"). */
static int sandbox_sniset_list(const struct sandbox_registry *registry, const struct policy *policy,
			       int list, const struct allowset *literals, struct sniset *set)
{
	struct in6_addr addrs[NAMES_MAX_ADDRESSES];
	size_t count, n;
	const struct policy_entry *entries = policy_in_force(policy, list, &count);
	int err = 0;

	for (size_t i = 0; !err && i < count; i++) {
		const struct policy_entry *e = &entries[i];
		/* A lane name allows itself only; an allowed host its subdomains too. */
		uint8_t kinds = list == POLICY_LIST_HOSTS
					? BFBPF_SNI_NAME_SELF | BFBPF_SNI_NAME_SUBDOMAINS
					: BFBPF_SNI_NAME_SELF;

		if (e->kind == POLICY_ENTRY_WILDCARD) {
			/* Never resolved: only its marker; its learned names bring addresses. */
			err = sniset_add_name(set, policy, e->name, BFBPF_SNI_NAME_SUBDOMAINS,
					      e->port, NULL, 0, literals);
			continue;
		}
		if (!resolver_policy_entry_is_name(e))
			continue;
		n = sandbox_name_addresses(registry, e->name, e->port, list == POLICY_LIST_HOSTS,
					   literals, addrs);
		err = sniset_add_name(set, policy, e->name, kinds, e->port, addrs, n, literals);
	}
	return err;
}

int sandbox_sniset_compute(const struct sandbox_registry *registry, const struct policy *policy,
			   const struct sandbox_learned *learned, size_t learned_count,
			   struct sniset *out)
{
	struct allowset literals = {0};
	struct sniset set = {0};
	struct in6_addr addrs[NAMES_MAX_ADDRESSES];
	int err;

	if (!policy_sni_enforced(policy) || !registry->resolver) {
		*out = set;
		return 0;
	}
	err = allowset_from_policy(policy, &literals);
	for (int list = 0; !err && list < POLICY_LIST_COUNT; list++)
		err = sandbox_sniset_list(registry, policy, list, &literals, &set);
	/* A learned name: its own addresses, under each entry that allows it. */
	for (size_t i = 0; !err && i < learned_count; i++) {
		for (int list = 0; !err && list < POLICY_LIST_COUNT; list++) {
			size_t count, n;
			const struct policy_entry *entries = policy_in_force(policy, list, &count);

			for (size_t j = 0; !err && j < count; j++) {
				if (!policy_entry_allows_name(list, &entries[j], learned[i].name))
					continue;
				n = sandbox_name_addresses(
					registry, learned[i].name, entries[j].port,
					list == POLICY_LIST_HOSTS, &literals, addrs);
				err = sniset_add_name(&set, policy, learned[i].name,
						      BFBPF_SNI_NAME_SELF, entries[j].port, addrs,
						      n, &literals);
			}
		}
	}
	allowset_free(&literals);
	if (err) {
		sniset_free(&set);
		return err;
	}
	sniset_normalize(&set);
	*out = set;
	return 0;
}

int sandbox_sni_digest(const struct sandbox_registry *registry, const struct sandbox *sandbox,
		       uint64_t *out)
{
	struct sniset set = {0};
	int err = sandbox_sniset_compute(registry, &sandbox->policy, sandbox->learned,
					 sandbox->learned_count, &set);

	if (!err)
		*out = sniset_digest(&set);
	sniset_free(&set);
	return err;
}
