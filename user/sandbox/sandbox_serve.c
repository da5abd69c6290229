// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What a loop that serves the sandboxes' names does on each wake-up, shared
 * by the daemon and bfbpf run: hand a responder its socket's event, and
 * after the events re-program the sandboxes whose names' addresses changed,
 * then send the replies that waited for them.
 */
#include "dns/resolver.h"
#include "dns/responder.h"
#include "sandbox.h"

/* How often waiting queries are looked at (their names may time out). */
#define SANDBOX_SERVE_PENDING_MS 100

bool sandbox_registry_dns_handle(struct sandbox_registry *registry, int fd, uint32_t events)
{
	for (size_t i = 0; i < registry->count; i++)
		if (registry->items[i]->responder &&
		    responder_handle_fd(registry->items[i]->responder, fd, events))
			return true;
	return false;
}

void sandbox_registry_names_serve(struct sandbox_registry *registry)
{
	if (registry->resolver && resolver_take_changes(registry->resolver))
		for (size_t i = 0; i < registry->count; i++)
			sandbox_refresh(registry, registry->items[i]);
	for (size_t i = 0; i < registry->count; i++)
		if (registry->items[i]->responder)
			responder_poll(registry->items[i]->responder);
}

int sandbox_registry_dns_wait_ms(const struct sandbox_registry *registry)
{
	for (size_t i = 0; i < registry->count; i++)
		if (registry->items[i]->responder &&
		    responder_has_pending(registry->items[i]->responder))
			return SANDBOX_SERVE_PENDING_MS;
	return -1;
}
