/*
 * triage.c - one patch through the trained models (see triage.h).  The
 * feature context is prepared once per triage object (and once per
 * worker): the bot scores thousands of patches against the same mined
 * history.
 */
#include "scoring/model/triage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scoring/model/archds.h"
#include "scoring/model/dataset.h"

static const char *const task_dirs[TRIAGE_NTASKS] = { "fix", "risk" };

struct triage {
	struct pt_model *model[TRIAGE_NTASKS];
	struct pt_model *archive; /* models/risk-archive, or NULL */
	struct db *ldb;		  /* the list tables: any db given */
	struct feat_ctx *fc;
	struct db *db; /* NULL: scoring without history */
	int64_t repo_id;
	char *nohist; /* why db was given but not used */
	char version[256];
};

struct triage_worker {
	struct feat_ctx *fc;
};

static int load_model(struct triage *t, const char *state_dir, int k)
{
	struct buf dir = BUF_INIT;
	int rc;

	rc = buf_addf(&dir, "%s/models/%s", state_dir, task_dirs[k]);
	if (!rc && access(dir.ptr, F_OK) == 0)
		rc = model_load(&t->model[k], dir.ptr);
	buf_free(&dir);
	return rc;
}

static int load_archive(struct triage *t, const char *state_dir)
{
	struct buf dir = BUF_INIT;
	int rc;

	rc = buf_addf(&dir, "%s/models/" TRIAGE_ARCHIVE_TASK, state_dir);
	if (!rc && access(dir.ptr, F_OK) == 0)
		rc = model_load(&t->archive, dir.ptr);
	buf_free(&dir);
	return rc;
}

static int load_models(struct triage *t, const char *state_dir, unsigned tasks)
{
	int rc = 0, k;

	for (k = 0; k < TRIAGE_NTASKS && !rc; k++)
		if (tasks & (1u << k))
			rc = load_model(t, state_dir, k);
	if (!rc && (tasks & TRIAGE_WANT_RISK))
		rc = load_archive(t, state_dir);
	if (rc || t->model[TRIAGE_FIX] || t->model[TRIAGE_RISK] || t->archive)
		return rc;
	if (tasks == TRIAGE_WANT_FIX)
		return pt_error_set(PT_ENOTFOUND,
				    "no fix model in '%s': run "
				    "'patchtriage train --task fix'",
				    state_dir);
	return pt_error_set(PT_ENOTFOUND,
			    "no trained model in '%s/models'; "
			    "run 'patchtriage train'",
			    state_dir);
}

/* The mined repository's id; without one, score without history. */
static int find_history(struct triage *t, struct db *db, const char *repo)
{
	if (!db)
		return 0;
	if (dataset_repo(&t->repo_id, db, repo)) {
		t->repo_id = 0;
		t->nohist = pt_strdup(pt_error_last());
		pt_error_clear();
		return t->nohist ? 0 : PT_ENOMEM;
	}
	t->db = db;
	return 0;
}

int triage_open(struct triage **out, struct db *db, const char *state_dir)
{
	return triage_open_opts(out, db, state_dir, NULL);
}

int triage_open_opts(struct triage **out, struct db *db, const char *state_dir,
		     const struct triage_opts *o)
{
	unsigned tasks = o && o->tasks ? o->tasks
				       : TRIAGE_WANT_FIX | TRIAGE_WANT_RISK;
	struct triage *t;
	int rc;

	*out = NULL;
	t = pt_calloc(1, sizeof(*t));
	if (!t)
		return PT_ENOMEM;
	rc = load_models(t, state_dir, tasks);
	if (!rc)
		rc = find_history(t, db, o ? o->repo : NULL);
	if (!rc)
		rc = feat_ctx_new(&t->fc, t->db, t->repo_id);
	if (rc) {
		triage_free(t);
		return rc;
	}
	t->ldb = db;
	snprintf(t->version, sizeof(t->version), "fix %s, risk %s%s%s",
		 t->model[0] ? model_version(t->model[0]) : "none",
		 t->model[1] ? model_version(t->model[1]) : "none",
		 t->archive ? ", list mail " : "",
		 t->archive ? model_version(t->archive) : "");
	*out = t;
	return 0;
}

void triage_free(struct triage *t)
{
	int k;

	if (!t)
		return;
	for (k = 0; k < TRIAGE_NTASKS; k++)
		model_free(t->model[k]);
	model_free(t->archive);
	feat_ctx_free(t->fc);
	free(t->nohist);
	free(t);
}

int triage_history(const struct triage *t, const char **why)
{
	if (why)
		*why = t->nohist;
	return t->db != NULL;
}

int triage_worker_new(struct triage_worker **out, const struct triage *t)
{
	struct triage_worker *w = pt_calloc(1, sizeof(*w));
	int rc;

	*out = NULL;
	if (!w)
		return PT_ENOMEM;
	rc = feat_ctx_new(&w->fc, t->db, t->repo_id);
	if (rc) {
		free(w);
		return rc;
	}
	*out = w;
	return 0;
}

void triage_worker_free(struct triage_worker *w)
{
	if (!w)
		return;
	feat_ctx_free(w->fc);
	free(w);
}

const char *triage_version(const struct triage *t)
{
	return t->version;
}

const char *triage_task_version(const struct triage *t, enum triage_task k)
{
	return t->model[k] ? model_version(t->model[k]) : "none";
}

const struct pt_model *triage_model(const struct triage *t, enum triage_task k)
{
	return t->model[k];
}

void triage_result_clear(struct triage_result *r)
{
	int k;

	for (k = 0; k < TRIAGE_NTASKS; k++)
		explain_free(r->task[k].why, r->task[k].nwhy);
	feat_vec_free(&r->vec);
	memset(r, 0, sizeof(*r));
}

static void thread_to_feat(struct feat_thread *ft,
			   const struct thread_features *tf)
{
	memset(ft, 0, sizeof(*ft));
	if (!tf)
		return;
	ft->known = 1;
	ft->replies = tf->replies;
	ft->reviewers = tf->reviewers;
	ft->inline_comments = tf->inline_comments;
	ft->versions = tf->versions_before + 1;
	ft->negative = tf->sentiment < 0 ? 1 : 0;
}

int triage_score(struct triage_result *out, struct triage *t,
		 const struct patch *p, const struct thread_features *tf)
{
	return triage_score_with(out, t, NULL, p, tf, 0);
}

int triage_score_with(struct triage_result *out, const struct triage *t,
		      struct triage_worker *w, const struct patch *p,
		      const struct thread_features *tf, unsigned flags)
{
	int why = !(flags & TRIAGE_NO_REASONS);
	struct feat_thread ft;
	struct triage_score *s;
	int rc, k;

	memset(out, 0, sizeof(*out));
	thread_to_feat(&ft, tf);
	rc = feat_compute(&out->vec, w ? w->fc : t->fc, p, tf ? &ft : NULL,
			  MODEL_HASH_BITS, why ? FEAT_NAMES : 0);
	for (k = 0; !rc && k < TRIAGE_NTASKS; k++) {
		if (!t->model[k])
			continue;
		s = &out->task[k];
		s->have = 1;
		s->version = model_version(t->model[k]);
		s->model = t->model[k];
		rc = model_predict(&s->p, t->model[k], out->vec.tab,
				   out->vec.sp, out->vec.nsp);
		if (!rc && why)
			rc = explain_vec(&s->why, &s->nwhy, &s->bias,
					 t->model[k], &out->vec);
	}
	if (rc)
		triage_result_clear(out);
	return rc;
}

const char *triage_top_reason(const struct triage_result *r, enum triage_task k)
{
	const struct triage_score *s = &r->task[k];
	size_t i;

	/* the strongest reason that pushes the score the way it went */
	for (i = 0; i < s->nwhy; i++)
		if (s->why[i].text && (s->p >= 0.5) == (s->why[i].weight > 0))
			return s->why[i].text;
	return s->nwhy && s->why[0].text ? s->why[0].text : "";
}

int triage_has_archive(const struct triage *t)
{
	return t->archive && t->ldb;
}

int triage_score_archive(struct triage_result *out, const struct triage *t,
			 int64_t posting_id, int64_t as_of)
{
	struct triage_score *s = &out->task[TRIAGE_RISK];
	struct explain_reason *why = NULL;
	size_t nwhy = 0;
	double p, bias;
	int rc;

	if (!triage_has_archive(t) || !posting_id)
		return 0;
	rc = archds_score(&p, &why, &nwhy, &bias, t->archive, t->ldb,
			  posting_id, as_of);
	if (rc)
		return rc;
	explain_free(s->why, s->nwhy);
	s->have = 1;
	s->p = p;
	s->version = model_version(t->archive);
	s->model = t->archive;
	s->why = why;
	s->nwhy = nwhy;
	s->bias = bias;
	return 0;
}
