/*
 * model_lrfits.c - a batch of independent liblinear fits on one pool,
 * run on up to `jobs` threads: the C grid and the out-of-fold folds of
 * model_train.c.  Each fit is the one model_lr_fit makes alone, so the
 * models are the same whatever the number of threads; only the order
 * the fits finish in changes, and the caller reads the results in the
 * batch's order.  Progress is reported from the calling thread.
 */
#include <linear.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/model/model_int.h"

struct batch {
	struct lr_fit *fits;
	size_t n, next, done;
	const struct lr_pool *pool;
	pthread_mutex_t mu;
	pthread_cond_t moved;
};

static void fit_one(struct lr_fit *f, const struct lr_pool *pool)
{
	f->rc = model_lr_fit_quiet(&f->lr, &f->sign, pool, f->pos, f->n, f->C);
	if (f->rc)
		snprintf(f->err, sizeof(f->err), "%s", pt_error_last());
}

static void *fit_worker(void *arg)
{
	struct batch *b = arg;

	for (;;) {
		size_t k;

		pthread_mutex_lock(&b->mu);
		k = b->next < b->n ? b->next++ : b->n;
		pthread_mutex_unlock(&b->mu);
		if (k == b->n)
			return NULL;
		fit_one(&b->fits[k], b->pool);
		pthread_mutex_lock(&b->mu);
		b->done++;
		pthread_cond_signal(&b->moved);
		pthread_mutex_unlock(&b->mu);
	}
}

/* Wait for the workers, saying each finished fit through p's progress. */
static void wait_all(struct batch *b, const struct model_params *p,
		     const char *phase)
{
	size_t seen = 0;

	pthread_mutex_lock(&b->mu);
	while (b->done < b->n) {
		while (b->done == seen)
			pthread_cond_wait(&b->moved, &b->mu);
		seen = b->done;
		pthread_mutex_unlock(&b->mu);
		progress(p, phase, (double)seen / (double)b->n);
		pthread_mutex_lock(&b->mu);
	}
	pthread_mutex_unlock(&b->mu);
}

static unsigned start_workers(pthread_t *t, unsigned want, struct batch *b)
{
	unsigned k;

	for (k = 0; k < want; k++)
		if (pthread_create(&t[k], NULL, fit_worker, b))
			break;
	return k;
}

/* The first failed fit's error, in batch order. */
static int first_error(const struct lr_fit *fits, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (fits[k].rc)
			return pt_error_set(fits[k].rc, "%s", fits[k].err);
	return 0;
}

int model_lr_fit_all(struct lr_fit *fits, size_t n, const struct lr_pool *pool,
		     const struct model_params *p, const char *phase)
{
	pthread_t t[MODEL_MAX_JOBS];
	struct batch b = { fits,
			   n,
			   0,
			   0,
			   pool,
			   PTHREAD_MUTEX_INITIALIZER,
			   PTHREAD_COND_INITIALIZER };
	unsigned want = p->jobs < 1 ? 1 : p->jobs, got, k;
	size_t i;

	for (i = 0; i < n; i++) {
		fits[i].lr = NULL;
		fits[i].rc = 0;
		fits[i].err[0] = '\0';
	}
	model_lr_quiet();
	if (want > MODEL_MAX_JOBS)
		want = MODEL_MAX_JOBS;
	if (want > n)
		want = (unsigned)n;
	got = want > 1 ? start_workers(t, want, &b) : 0;
	progress(p, phase, 0);
	if (got)
		wait_all(&b, p, phase);
	else
		for (i = 0; i < n; i++) {
			fit_one(&fits[i], pool);
			progress(p, phase, (double)(i + 1) / (double)n);
		}
	/* a thread that could not start left its share to the others */
	for (k = 0; k < got; k++)
		pthread_join(t[k], NULL);
	return first_error(fits, n);
}

void model_lr_fits_free(struct lr_fit *fits, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fits[i].lr)
			free_and_destroy_model(&fits[i].lr);
}
