// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>

#include "background.h"

struct background_job {
	background_fn run, drop;
	void *arg;
	uint64_t key;
	size_t weight;
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
};

static void *background_main(void *arg)
{
	struct background *background = arg;

	pthread_mutex_lock(&background->lock);
	for (;;) {
		struct background_job *job;

		while (!background->head && !background->stopping)
			pthread_cond_wait(&background->work, &background->lock);
		job = background->head;
		if (!job)
			break; /* stopping, and nothing is left */
		background->head = job->next;
		if (!background->head)
			background->tail = NULL;
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

	if (!background)
		return -ENOMEM;
	pthread_mutex_init(&background->lock, NULL);
	pthread_cond_init(&background->work, NULL);
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

/* A waiting job of the same key takes the new arg: only the latest one needs doing. */
static bool background_replace(struct background *background, background_fn run, background_fn drop,
			       void *arg, uint64_t key, size_t weight)
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
		return true;
	}
	return false;
}

void background_submit(struct background *background, background_fn run, background_fn drop,
		       void *arg, uint64_t key, size_t weight)
{
	struct background_job *job;

	if (!background) {
		run(arg);
		return;
	}
	pthread_mutex_lock(&background->lock);
	if (background_replace(background, run, drop, arg, key, weight)) {
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
	while (background->head || background->busy)
		pthread_cond_wait(&background->done, &background->lock);
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
