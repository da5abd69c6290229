/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Background work: what an attach or update leaves after its reply (deleting
 * the entries of the generation it replaced, writing the sandbox's state
 * file) runs on one worker thread, in order, while the daemon's loop serves
 * the next request. A job owns everything it touches (a copy, never a
 * sandbox), so the two threads share nothing but the queue and the maps'
 * file descriptors.
 */
#ifndef BFBPF_BACKGROUND_H
#define BFBPF_BACKGROUND_H

#include <stddef.h>
#include <stdint.h>

/*
 * Queued work is bounded: past this weight (allow entries waiting to be
 * deleted), a job runs in the caller (or, one of a key, waits for room), so
 * that replaced generations never pile up in the maps faster than they go.
 */
#define BACKGROUND_MAX_WEIGHT 200000

struct background;

/* run does the job and frees arg; drop only frees it (a job replaced before it ran). */
typedef void (*background_fn)(void *arg);

int background_start(struct background **out);
/* Runs what is queued, then stops the thread. NULL is a no-op. */
void background_stop(struct background *background);

/*
 * Queue a job. A key other than 0 names what the job is about: a job of the
 * same key still waiting is replaced (only the latest state file matters).
 * A delay puts the job off (jobs due meanwhile go first), so that a burst of
 * updates of one sandbox writes its state file once every delay, not once
 * an update; a replacement keeps the earlier time. With background NULL the
 * job runs now, in the caller. Never fails: when the queue cannot grow, the
 * job runs now.
 */
void background_submit(struct background *background, background_fn run, background_fn drop,
		       void *arg, uint64_t key, size_t weight, unsigned int delay_ms);
/*
 * Wait until every queued job has run, delays cut short (before reading the
 * maps whole; stopping cuts them short too). NULL is a no-op.
 */
void background_drain(struct background *background);
/* The weight queued or running (0 for NULL): allow entries still to be deleted. */
size_t background_weight(struct background *background);

#endif /* BFBPF_BACKGROUND_H */
