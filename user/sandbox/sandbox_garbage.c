// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What comes after a reply: the entries of replaced generations, deleted by
 * the background worker (or the loop), and the state files that lag.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/background.h"
#include "sandbox.h"
#include "sandbox_internal.h"

/* Takes over the entries (the set is emptied); deletes them now if it cannot keep them. */
void sandbox_garbage_add(struct sandbox_registry *registry, uint32_t generation,
			 struct allowset *entries)
{
	struct sandbox_garbage *grown =
		reallocarray(registry->garbage, registry->garbage_count + 1, sizeof(*grown));

	if (!grown) {
		loader_entries_delete(registry->loader, generation, entries);
		allowset_free(entries);
		return;
	}
	registry->garbage = grown;
	registry->garbage[registry->garbage_count].generation = generation;
	registry->garbage[registry->garbage_count++].entries = *entries;
	memset(entries, 0, sizeof(*entries));
}

/* A replaced generation's entries, owned by the job that deletes them. */
struct sandbox_delete_job {
	struct loader *loader;
	struct sandbox_garbage garbage;
};

static void sandbox_delete_job_free(void *arg)
{
	struct sandbox_delete_job *job = arg;

	allowset_free(&job->garbage.entries);
	free(job);
}

static void sandbox_delete_job_run(void *arg)
{
	struct sandbox_delete_job *job = arg;

	loader_entries_delete(job->loader, job->garbage.generation, &job->garbage.entries);
	sandbox_delete_job_free(job);
}

static void sandbox_garbage_submit(struct sandbox_registry *registry,
				   struct sandbox_garbage *garbage)
{
	struct sandbox_delete_job *job = malloc(sizeof(*job));

	if (!job) {
		loader_entries_delete(registry->loader, garbage->generation, &garbage->entries);
		allowset_free(&garbage->entries);
		return;
	}
	job->loader = registry->loader;
	job->garbage = *garbage;
	memset(garbage, 0, sizeof(*garbage));
	background_submit(registry->background, sandbox_delete_job_run, sandbox_delete_job_free,
			  job, 0, job->garbage.entries.count, 0);
}

void sandbox_registry_collect(struct sandbox_registry *registry)
{
	for (size_t i = 0; i < registry->count; i++) {
		if (!registry->items[i]->state_dirty)
			continue;
		sandbox_state_write(registry, registry->items[i]);
		registry->items[i]->state_dirty = false;
	}
	for (size_t i = 0; i < registry->garbage_count; i++)
		sandbox_garbage_submit(registry, &registry->garbage[i]);
	free(registry->garbage);
	registry->garbage = NULL;
	registry->garbage_count = 0;
}

void sandbox_registry_quiesce(struct sandbox_registry *registry)
{
	background_drain(registry->background);
}
