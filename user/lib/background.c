// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "background.h"

struct background_job {
	background_fn run, drop;
	void *arg;
	uint64_t key;
	size_t weight;
	uint64_t not_before_ms; /* CLOCK_MONOTONIC; 0: at once */
	struct background_job *next;
};

struct background {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work; /* a job was queued, or stop */
	pthread_cond_t done; /* a job ran */
	struct background_job *head, *tail;
	size_t weight; /* of the queued jobs and the one running */
	bool busy;     /* a job is running */
	bool stopping;
	int hurry; /* drains waiting: delays do not count */
};

static uint64_t background_now_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
}

/*
 * The first job due (in queue order), taken out of the queue; NULL if none
 * is, with *wake_ms the earliest time one will be (0: none is queued).
 */
static struct background_job *background_take(struct background *background, uint64_t *wake_ms)
{
	bool now_all = background->stopping || background->hurry;
	struct background_job *job, *prev = NULL;
	uint64_t now = background_now_ms();

	*wake_ms = 0;
	for (job = background->head; job; prev = job, job = job->next) {
		if (now_all || job->not_before_ms <= now)
			break;
		if (!*wake_ms || job->not_before_ms < *wake_ms)
			*wake_ms = job->not_before_ms;
	}
	if (!job)
		return NULL;
	if (prev)
		prev->next = job->next;
	else
		background->head = job->next;
	if (background->tail == job)
		background->tail = prev;
	return job;
}

static void background_wait_until(struct background *background, uint64_t wake_ms)
{
	struct timespec until = {.tv_sec = (time_t)(wake_ms / 1000),
				 .tv_nsec = (long)(wake_ms % 1000) * 1000000};

	pthread_cond_timedwait(&background->work, &background->lock, &until);
}

static void *background_main(void *arg)
{
	struct background *background = arg;

	pthread_mutex_lock(&background->lock);
	for (;;) {
		struct background_job *job;
		uint64_t wake_ms;

		while (!background->head && !background->stopping)
			pthread_cond_wait(&background->work, &background->lock);
		job = background_take(background, &wake_ms);
		if (!job && !wake_ms)
			break; /* stopping, and nothing is left */
		if (!job) {
			background_wait_until(background, wake_ms);
			continue;
		}
		background->busy = true;
		pthread_mutex_unlock(&background->lock);
		job->run(job->arg);
		pthread_mutex_lock(&background->lock);
		background->busy = false;
		background->weight -= job->weight;
		free(job);
		pthread_cond_broadcast(&background->done);
	}
	pthread_mutex_unlock(&background->lock);
	return NULL;
}

int background_start(struct background **out)
{
	struct background *background = calloc(1, sizeof(*background));
	sigset_t all, old;
	int err;

	pthread_condattr_t monotonic;
	if (!background)
		return -ENOMEM;
	pthread_mutex_init(&background->lock, NULL);
	/* Delays count on the clock that never jumps. */
	pthread_condattr_init(&monotonic);
	pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
	pthread_cond_init(&background->work, &monotonic);
	pthread_condattr_destroy(&monotonic);
	pthread_cond_init(&background->done, NULL);
	/* Signals are the loop's (a signalfd): the worker must never take one. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&background->thread, NULL, background_main, background);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto cleanup;
	*out = background;
	return 0;
cleanup:
	pthread_cond_destroy(&background->done);
	pthread_cond_destroy(&background->work);
	pthread_mutex_destroy(&background->lock);
	free(background);
	return err;
}

void background_stop(struct background *background)
{
	if (!background)
		return;
	pthread_mutex_lock(&background->lock);
	background->stopping = true;
	pthread_cond_signal(&background->work);
	pthread_mutex_unlock(&background->lock);
	pthread_join(background->thread, NULL);
	pthread_cond_destroy(&background->done);
	pthread_cond_destroy(&background->work);
	pthread_mutex_destroy(&background->lock);
	free(background);
}

/*
 * A waiting job of the same key takes the new arg: only the latest one needs
 * doing. It keeps the earlier of the two times: a burst of replacements is
 * done at least once every delay, not put off for as long as the burst lasts.
 */
static bool background_replace(struct background *background, background_fn run, background_fn drop,
			       void *arg, uint64_t key, size_t weight, uint64_t not_before_ms)
{
	for (struct background_job *job = background->head; key && job; job = job->next) {
		if (job->key != key)
			continue;
		job->drop(job->arg);
		background->weight = background->weight - job->weight + weight;
		job->run = run;
		job->drop = drop;
		job->arg = arg;
		job->weight = weight;
		if (not_before_ms < job->not_before_ms)
			job->not_before_ms = not_before_ms;
		pthread_cond_signal(&background->work);
		return true;
	}
	return false;
}

void background_submit(struct background *background, background_fn run, background_fn drop,
		       void *arg, uint64_t key, size_t weight, unsigned int delay_ms)
{
	uint64_t not_before_ms = delay_ms ? background_now_ms() + delay_ms : 0;
	struct background_job *job;

	if (!background) {
		run(arg);
		return;
	}
	pthread_mutex_lock(&background->lock);
	if (background_replace(background, run, drop, arg, key, weight, not_before_ms)) {
		pthread_mutex_unlock(&background->lock);
		return;
	}
	/*
	 * Back-pressure. A job of no key (its order does not matter) runs here
	 * and now, as it would without a worker; one of a key waits for room (a
	 * job heavier than the bound alone waits only for an empty queue).
	 */
	if (!key && background->weight + weight > BACKGROUND_MAX_WEIGHT) {
		pthread_mutex_unlock(&background->lock);
		run(arg);
		return;
	}
	while ((background->head || background->busy) &&
	       background->weight + weight > BACKGROUND_MAX_WEIGHT)
		pthread_cond_wait(&background->done, &background->lock);
	job = calloc(1, sizeof(*job));
	if (!job) {
		pthread_mutex_unlock(&background->lock);
		/* In order all the same: what is queued first, then this one, here. */
		background_drain(background);
		run(arg);
		return;
	}
	job->run = run;
	job->drop = drop;
	job->arg = arg;
	job->key = key;
	job->weight = weight;
	job->not_before_ms = not_before_ms;
	if (background->tail)
		background->tail->next = job;
	else
		background->head = job;
	background->tail = job;
	background->weight += weight;
	pthread_cond_signal(&background->work);
	pthread_mutex_unlock(&background->lock);
}

void background_drain(struct background *background)
{
	if (!background)
		return;
	pthread_mutex_lock(&background->lock);
	background->hurry++;
	pthread_cond_signal(&background->work);
	while (background->head || background->busy)
		pthread_cond_wait(&background->done, &background->lock);
	background->hurry--;
	pthread_mutex_unlock(&background->lock);
}

size_t background_weight(struct background *background)
{
	size_t weight;

	if (!background)
		return 0;
	pthread_mutex_lock(&background->lock);
	weight = background->weight;
	pthread_mutex_unlock(&background->lock);
	return weight;
}
