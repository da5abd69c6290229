// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Background worker: order, replacement by key, drain, back-pressure, no worker. */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <setjmp.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/background.h"

struct test_log {
	pthread_mutex_t lock;
	int ran[64], dropped[64];
	size_t ran_count, dropped_count;
	pthread_t runner[64];
};

struct test_job {
	struct test_log *log;
	int id;
	pthread_mutex_t *gate; /* held by the test: the job waits on it */
};

static struct test_job *job_new(struct test_log *log, int id, pthread_mutex_t *gate)
{
	struct test_job *job = malloc(sizeof(*job));

	assert_non_null(job);
	job->log = log;
	job->id = id;
	job->gate = gate;
	return job;
}

static void job_run(void *arg)
{
	struct test_job *job = arg;

	if (job->gate) {
		pthread_mutex_lock(job->gate);
		pthread_mutex_unlock(job->gate);
	}
	pthread_mutex_lock(&job->log->lock);
	job->log->runner[job->log->ran_count] = pthread_self();
	job->log->ran[job->log->ran_count++] = job->id;
	pthread_mutex_unlock(&job->log->lock);
	free(job);
}

static void job_drop(void *arg)
{
	struct test_job *job = arg;

	pthread_mutex_lock(&job->log->lock);
	job->log->dropped[job->log->dropped_count++] = job->id;
	pthread_mutex_unlock(&job->log->lock);
	free(job);
}

static void test_without_worker_runs_now(void **state)
{
	struct test_log log = {.lock = PTHREAD_MUTEX_INITIALIZER};

	(void)state;
	background_submit(NULL, job_run, job_drop, job_new(&log, 1, NULL), 7, 10, 0);
	assert_int_equal(log.ran_count, 1);
	assert_true(pthread_equal(log.runner[0], pthread_self()));
	background_drain(NULL);
	background_stop(NULL);
}

static void test_order_and_replacement(void **state)
{
	struct test_log log = {.lock = PTHREAD_MUTEX_INITIALIZER};
	pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
	struct background *background;

	(void)state;
	assert_int_equal(background_start(&background), 0);
	/* Job 1 holds the worker until the gate opens: the others wait in the queue. */
	pthread_mutex_lock(&gate);
	background_submit(background, job_run, job_drop, job_new(&log, 1, &gate), 5, 0, 0);
	background_submit(background, job_run, job_drop, job_new(&log, 2, NULL), 0, 0, 0);
	background_submit(background, job_run, job_drop, job_new(&log, 3, NULL), 9, 0, 0);
	background_submit(background, job_run, job_drop, job_new(&log, 4, NULL), 0, 0, 0);
	/* Replaces job 3 (same key, still waiting), in its place, with its weight. */
	background_submit(background, job_run, job_drop, job_new(&log, 5, NULL), 9, 3, 0);
	assert_int_equal(background_weight(background), 3);
	pthread_mutex_unlock(&gate);
	background_drain(background);
	assert_int_equal(background_weight(background), 0);
	assert_int_equal(background_weight(NULL), 0);
	assert_int_equal(log.ran_count, 4);
	assert_int_equal(log.ran[0], 1);
	assert_int_equal(log.ran[1], 2);
	assert_int_equal(log.ran[2], 5);
	assert_int_equal(log.ran[3], 4);
	assert_false(pthread_equal(log.runner[0], pthread_self()));
	assert_int_equal(log.dropped_count, 1);
	assert_int_equal(log.dropped[0], 3);
	/* A running job is not replaced: job 6 of key 5 runs too. */
	background_submit(background, job_run, job_drop, job_new(&log, 6, NULL), 5, 0, 0);
	background_stop(background);
	assert_int_equal(log.ran_count, 5);
	assert_int_equal(log.ran[4], 6);
}

struct test_submitter {
	struct background *background;
	struct test_log *log;
	int done;
};

static void *submit_heavy(void *arg)
{
	struct test_submitter *submitter = arg;

	background_submit(submitter->background, job_run, job_drop,
			  job_new(submitter->log, 2, NULL), 4, BACKGROUND_MAX_WEIGHT, 0);
	__atomic_store_n(&submitter->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Past the weight bound, a job of no key runs in the caller, now; one of a key waits. */
static void test_back_pressure(void **state)
{
	struct test_log log = {.lock = PTHREAD_MUTEX_INITIALIZER};
	pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
	struct test_submitter submitter = {.log = &log};
	pthread_t thread;

	(void)state;
	assert_int_equal(background_start(&submitter.background), 0);
	pthread_mutex_lock(&gate);
	background_submit(submitter.background, job_run, job_drop, job_new(&log, 1, &gate), 0, 1,
			  0);
	background_submit(submitter.background, job_run, job_drop, job_new(&log, 3, NULL), 0,
			  BACKGROUND_MAX_WEIGHT, 0);
	assert_int_equal(log.ran_count, 1); /* 3, here, while 1 holds the worker */
	assert_int_equal(log.ran[0], 3);
	assert_true(pthread_equal(log.runner[0], pthread_self()));
	assert_int_equal(pthread_create(&thread, NULL, submit_heavy, &submitter), 0);
	usleep(50000); /* unblocked, the submit would be done in microseconds */
	assert_int_equal(__atomic_load_n(&submitter.done, __ATOMIC_SEQ_CST), 0);
	pthread_mutex_unlock(&gate);
	pthread_join(thread, NULL);
	assert_int_equal(submitter.done, 1);
	background_stop(submitter.background);
	assert_int_equal(log.ran_count, 3);
	assert_int_equal(log.ran[1], 1);
	assert_int_equal(log.ran[2], 2);
}

static uint64_t now_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
}

/* A delayed job waits (jobs due meanwhile go first); a replacement keeps its time. */
static void test_delay(void **state)
{
	struct test_log log = {.lock = PTHREAD_MUTEX_INITIALIZER};
	struct background *background;
	uint64_t started = now_ms();

	(void)state;
	assert_int_equal(background_start(&background), 0);
	background_submit(background, job_run, job_drop, job_new(&log, 1, NULL), 5, 0, 150);
	background_submit(background, job_run, job_drop, job_new(&log, 2, NULL), 0, 0, 0);
	usleep(50000);
	pthread_mutex_lock(&log.lock);
	assert_int_equal(log.ran_count, 1); /* 2 ran, 1 waits */
	assert_int_equal(log.ran[0], 2);
	pthread_mutex_unlock(&log.lock);
	/* Replacing 1 with a longer delay keeps its time (150 ms from the start). */
	background_submit(background, job_run, job_drop, job_new(&log, 3, NULL), 5, 0, 10000);
	while (__atomic_load_n(&log.ran_count, __ATOMIC_SEQ_CST) < 2)
		usleep(5000);
	assert_true(now_ms() - started >= 140);
	assert_true(now_ms() - started < 5000);
	assert_int_equal(log.ran[1], 3);
	assert_int_equal(log.dropped_count, 1);
	/* A drain does not wait out a delay; nor does a stop. */
	background_submit(background, job_run, job_drop, job_new(&log, 4, NULL), 6, 0, 10000);
	started = now_ms();
	background_drain(background);
	assert_int_equal(log.ran_count, 3);
	assert_true(now_ms() - started < 5000);
	background_submit(background, job_run, job_drop, job_new(&log, 5, NULL), 7, 0, 10000);
	background_stop(background);
	assert_int_equal(log.ran_count, 4);
	assert_int_equal(log.ran[3], 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_without_worker_runs_now),
		cmocka_unit_test(test_order_and_replacement),
		cmocka_unit_test(test_back_pressure),
		cmocka_unit_test(test_delay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
