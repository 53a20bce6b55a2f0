/*
 * model_par.c - independent fits side by side on up to `jobs` threads:
 * a generic runner (model_par_run) and, on it, a batch of liblinear
 * fits on one pool (the C grid and the out-of-fold folds of
 * model_train.c).  Each job computes what it would alone, and callers
 * read the results in the batch's order, so a model does not depend on
 * the number of threads; only the order the jobs finish in does.
 * Progress is said from the calling thread.
 */
#include <linear.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scoring/model/model_int.h"

#define TICK_NS 250000000L /* progress at least this often */

struct par {
	size_t n, next, done;
	void (*fn)(size_t k, void *ctx);
	void *ctx;
	pthread_mutex_t mu;
	pthread_cond_t moved;
};

static void *par_worker(void *arg)
{
	struct par *b = arg;

	for (;;) {
		size_t k;

		pthread_mutex_lock(&b->mu);
		k = b->next < b->n ? b->next++ : b->n;
		pthread_mutex_unlock(&b->mu);
		if (k == b->n)
			return NULL;
		b->fn(k, b->ctx);
		pthread_mutex_lock(&b->mu);
		b->done++;
		pthread_cond_signal(&b->moved);
		pthread_mutex_unlock(&b->mu);
	}
}

static void deadline(struct timespec *t)
{
	clock_gettime(CLOCK_REALTIME, t);
	t->tv_nsec += TICK_NS;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

/* Wait for the workers, ticking as jobs finish and every TICK_NS. */
static void wait_all(struct par *b, void (*tick)(void *, size_t))
{
	pthread_mutex_lock(&b->mu);
	while (b->done < b->n) {
		struct timespec t;
		size_t seen;

		deadline(&t);
		pthread_cond_timedwait(&b->moved, &b->mu, &t);
		seen = b->done;
		pthread_mutex_unlock(&b->mu);
		if (tick)
			tick(b->ctx, seen);
		pthread_mutex_lock(&b->mu);
	}
	pthread_mutex_unlock(&b->mu);
}

void model_par_run(size_t n, unsigned jobs, void (*fn)(size_t k, void *ctx),
		   void (*tick)(void *ctx, size_t done), void *ctx)
{
	pthread_t t[MODEL_MAX_JOBS];
	struct par b = { n,
			 0,
			 0,
			 fn,
			 ctx,
			 PTHREAD_MUTEX_INITIALIZER,
			 PTHREAD_COND_INITIALIZER };
	unsigned want = jobs < 1 ? 1 : jobs, got = 0, k;

	if (want > MODEL_MAX_JOBS)
		want = MODEL_MAX_JOBS;
	if (want > n)
		want = (unsigned)n;
	for (k = 0; want > 1 && k < want; k++)
		if (pthread_create(&t[got], NULL, par_worker, &b) == 0)
			got++;
	if (got) {
		/* a thread that could not start left its share to the others */
		wait_all(&b, tick);
	} else {
		for (; b.next < n; b.next++) {
			fn(b.next, ctx);
			if (tick)
				tick(ctx, b.next + 1);
		}
	}
	for (k = 0; k < got; k++)
		pthread_join(t[k], NULL);
}

/* ---- a batch of liblinear fits ---------------------------------------- */

struct lr_batch {
	struct lr_fit *fits;
	size_t n;
	const struct lr_pool *pool;
	const struct model_params *p;
	const char *phase;
};

static void lr_job(size_t k, void *ctx)
{
	struct lr_batch *b = ctx;
	struct lr_fit *f = &b->fits[k];

	f->rc = model_lr_fit_quiet(&f->lr, &f->sign, b->pool, f->pos, f->n,
				   f->C);
	if (f->rc)
		snprintf(f->err, sizeof(f->err), "%s", pt_error_last());
}

static void lr_tick(void *ctx, size_t done)
{
	struct lr_batch *b = ctx;

	progress(b->p, b->phase, (double)done / (double)b->n);
}

int model_lr_fit_all(struct lr_fit *fits, size_t n, const struct lr_pool *pool,
		     const struct model_params *p, const char *phase)
{
	struct lr_batch b = { fits, n, pool, p, phase };
	size_t i;

	for (i = 0; i < n; i++) {
		fits[i].lr = NULL;
		fits[i].rc = 0;
		fits[i].err[0] = '\0';
	}
	model_lr_quiet();
	progress(p, phase, 0);
	model_par_run(n, p->jobs, lr_job, lr_tick, &b);
	for (i = 0; i < n; i++)
		if (fits[i].rc)
			return pt_error_set(fits[i].rc, "%s", fits[i].err);
	return 0;
}

void model_lr_fits_free(struct lr_fit *fits, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fits[i].lr)
			free_and_destroy_model(&fits[i].lr);
}
