// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What a sandbox's names contribute to its allow set, and how status shows them. */
#include <arpa/inet.h>
#include <string.h>

#include "resolver.h"
#include "sandbox.h"

bool sandbox_names_settled(struct sandbox_registry *registry, const struct sandbox *sandbox)
{
	return !registry->resolver || !sandbox->policy_known ||
	       resolver_policy_settled(registry->resolver, &sandbox->policy);
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
		if (filtered && names_address_is_filtered(&name->addresses[i].addr) &&
		    !allowset_covers(literals, allowed.addr, entry->port))
			continue;
		err = allowset_add(set, &allowed);
		if (err)
			return err;
	}
	return 0;
}

int sandbox_allowset_compute(const struct sandbox_registry *registry, const struct policy *policy,
			     struct allowset *out)
{
	struct allowset set = {0}, literals = {0};
	int err;

	err = allowset_from_policy(policy, &literals);
	if (err)
		return err;
	for (size_t i = 0; i < literals.count; i++) {
		err = allowset_add(&set, &literals.entries[i]);
		if (err)
			goto cleanup;
	}
	for (size_t i = 0; registry->resolver && policy->mode == POLICY_MODE_ALLOWLIST &&
			   i < policy->n_allowed_hosts;
	     i++) {
		if (!resolver_policy_entry_is_name(&policy->allowed_hosts[i]))
			continue;
		err = sandbox_add_name(registry, &policy->allowed_hosts[i], true, &literals, &set);
		if (err)
			goto cleanup;
	}
	/* The lane comes from the runner, not the task: exempt from the range filter. */
	for (size_t i = 0; registry->resolver && policy->mode != POLICY_MODE_PUBLIC &&
			   policy->allow_model_endpoint && i < policy->n_model_endpoints;
	     i++) {
		if (!resolver_policy_entry_is_name(&policy->model_endpoints[i]))
			continue;
		err = sandbox_add_name(registry, &policy->model_endpoints[i], false, &literals,
				       &set);
		if (err)
			goto cleanup;
	}
	allowset_normalize(&set);
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
		if (filtered && names_address_is_filtered(addr) &&
		    !allowset_covers(literals, addr->s6_addr, entry->port))
			json_array_append_new(dropped, json_string(text));
		else
			json_array_append_new(addresses, json_string(text));
	}
	return json_pack("{s:s, s:s, s:o, s:o, s:b, s:b, s:o, s:o, s:o, s:o}", "name", entry->name,
			 "role", filtered ? "allowed_host" : "model_endpoint", "addresses",
			 addresses, "filtered", dropped, "resolved", name && name->resolved_once,
			 "truncated", name && name->truncated, "last_error",
			 name && name->last_error ? json_string(name->last_error_text) : json_null(),
			 "last_success", sandbox_time_json(name ? name->last_success : 0),
			 "last_attempt", sandbox_time_json(name ? name->last_attempt : 0),
			 "next_refresh", sandbox_time_json(name ? name->next_refresh : 0));
}

json_t *sandbox_names_to_json(struct sandbox_registry *registry, const struct sandbox *sandbox)
{
	const struct policy *policy = &sandbox->policy;
	struct allowset literals = {0};
	json_t *list = json_array();

	allowset_from_policy(policy, &literals);
	for (size_t i = 0; policy->mode == POLICY_MODE_ALLOWLIST && i < policy->n_allowed_hosts;
	     i++)
		if (resolver_policy_entry_is_name(&policy->allowed_hosts[i]))
			json_array_append_new(list, sandbox_name_json(registry,
								      &policy->allowed_hosts[i],
								      true, &literals));
	for (size_t i = 0; policy->mode != POLICY_MODE_PUBLIC && policy->allow_model_endpoint &&
			   i < policy->n_model_endpoints;
	     i++)
		if (resolver_policy_entry_is_name(&policy->model_endpoints[i]))
			json_array_append_new(list, sandbox_name_json(registry,
								      &policy->model_endpoints[i],
								      false, &literals));
	allowset_free(&literals);
	return list;
}

/* Names of the policy that have no address programmed (after the range filter). */
json_t *sandbox_names_unresolved(struct sandbox_registry *registry, const struct sandbox *sandbox)
{
	json_t *names = sandbox_names_to_json(registry, sandbox), *item, *unresolved = json_array();
	size_t i;

	json_array_foreach(names, i, item)
		if (!json_array_size(json_object_get(item, "addresses")))
			json_array_append(unresolved, json_object_get(item, "name"));
	json_decref(names);
	return unresolved;
}
