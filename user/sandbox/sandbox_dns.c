// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The registry's side of the DNS responder: the table of operations through
 * which a sandbox's responder reads its policy, learns names and checks what
 * the maps hold. The responder (dns/) includes nothing of the sandbox layer.
 */
#include "dns/responder.h"
#include "events.h"
#include "lib/log.h"
#include "sandbox.h"
#include "sandbox_internal.h"
#include "sandbox_netns.h"

static const struct policy *sandbox_dns_policy(void *data, void *owner)
{
	struct sandbox *sandbox = owner;

	(void)data;
	return sandbox->policy_known ? &sandbox->policy : NULL;
}

static int sandbox_dns_learn(void *data, void *owner, const char *name)
{
	struct sandbox *sandbox = owner;
	bool added;
	int err = sandbox_learn(data, sandbox, name, &added);

	/* A new name goes into the state file after the reply (a restart keeps it). */
	if (!err && added)
		sandbox->state_dirty = true;
	return err;
}

static bool sandbox_dns_settled(void *data, void *owner)
{
	return sandbox_names_settled(data, owner);
}

static void sandbox_dns_refresh(void *data, void *owner)
{
	struct sandbox *sandbox = owner;

	if (sandbox->needs_refresh)
		sandbox_refresh(data, sandbox);
}

static bool sandbox_dns_programmed(void *data, void *owner, const struct in6_addr *addr)
{
	const struct sandbox *sandbox = owner;

	(void)data;
	return allowset_has_address(&sandbox->applied, addr->s6_addr);
}

static void sandbox_dns_refused(void *data, void *owner, const char *name, unsigned int qtype)
{
	struct sandbox_registry *registry = data;
	const struct sandbox *sandbox = owner;

	log_debug("%s: refused %s (type %u)", sandbox->path, name, qtype);
	events_record_dns_refusal(registry->events, sandbox, name, qtype);
}

static bool sandbox_dns_learned(void *data, void *owner, size_t index, const char **name,
				time_t *last_used)
{
	const struct sandbox *sandbox = owner;

	(void)data;
	if (index >= sandbox->learned_count)
		return false;
	*name = sandbox->learned[index].name;
	*last_used = sandbox->learned[index].last_used;
	return true;
}

static int sandbox_dns_allow_runtime(void *data, void *owner, const char *name,
				     const struct in6_addr *addrs, size_t count)
{
	struct sandbox *sandbox = owner;
	size_t before = sandbox->runtime_count;
	int err;

	(void)data;
	log_info("%s: runtime_network: %s answered by the runtime's resolver (%zu addresses in "
		 "its subnets)",
		 sandbox->path, name, count);
	err = sandbox_runtime_allow(sandbox, addrs, count);
	if (!err && (sandbox->runtime_count != before || sandbox->needs_refresh))
		sandbox->state_dirty = true; /* a restart keeps them (the state file) */
	return err;
}

static const struct responder_ops sandbox_dns_ops = {
	.policy = sandbox_dns_policy,
	.learn = sandbox_dns_learn,
	.settled = sandbox_dns_settled,
	.refresh = sandbox_dns_refresh,
	.programmed = sandbox_dns_programmed,
	.refused = sandbox_dns_refused,
	.learned = sandbox_dns_learned,
	.allow_runtime = sandbox_dns_allow_runtime,
};

int sandbox_dns_start(struct sandbox_registry *registry, struct sandbox *sandbox,
		      uint16_t want_port)
{
	int err;

	if (!registry->dns)
		return 0;
	err = responder_open(registry->dns, sandbox, sandbox->netns_fd, want_port,
			     &sandbox->responder);
	if (err)
		return err;
	sandbox->dns_port = responder_port(sandbox->responder);
	sandbox->dns_v6 = responder_has_v6(sandbox->responder);
	return 0;
}

void sandbox_registry_set_dns(struct sandbox_registry *registry, struct responder_context *dns)
{
	dns->ops = &sandbox_dns_ops;
	dns->ops_data = registry;
	registry->dns = dns;
}
