/*
 * verdict.c - one patch as the bot sees it (see verdict.h): its thread,
 * the list's reviews, the scores, the reasons worth showing and the
 * check descriptions.  The daemon's worker and `score`/`explain` both
 * come through here.
 */
#include "scoring/model/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>

#include "scoring/patch/trailer.h"

/* What the list said of the patch, when the mail thread knows it. */
static int thread_of(const struct verdict_lists *l, const struct patch *p,
		     int64_t *tpid, struct thread_features *tf)
{
	int64_t sid;
	int rc;

	*tpid = 0;
	if (!l || !l->th || !p->message_id)
		return PT_ENOTFOUND;
	rc = thread_find_patch(l->th, p->message_id, tpid, &sid);
	if (rc) {
		pt_error_clear();
		return PT_ENOTFOUND;
	}
	return thread_patch_features(l->th, *tpid, tf);
}

/*
 * The kind a list's act takes among the patch's trailers: the reviews
 * and Reported-by; any other act (Suggested-by, Nacked-by) stays OTHER.
 */
static enum trailer_kind review_kind(const char *k)
{
	enum trailer_kind kind = trailer_kind_of(k);

	if ((trailer_kind_flags(kind) & TRAILER_F_REVIEW) ||
	    kind == TRAILER_REPORTED)
		return kind;
	return TRAILER_OTHER;
}

static int add_trailer(struct patch *p, const char *key, const char *name,
		       const char *email)
{
	struct trailer *t, *v;
	size_t i;

	for (i = 0; i < p->ntrailers; i++)
		if (p->trailers[i].email && email &&
		    !strcasecmp(p->trailers[i].key, key) &&
		    !strcasecmp(p->trailers[i].email, email))
			return 0; /* already in the patch */
	v = realloc(p->trailers, (p->ntrailers + 1) * sizeof(*v));
	if (!v)
		return PT_ENOMEM;
	p->trailers = v;
	t = &v[p->ntrailers];
	memset(t, 0, sizeof(*t));
	t->kind = review_kind(key);
	t->key = pt_strdup(key);
	t->name = name ? pt_strdup(name) : NULL;
	t->email = email ? pt_strdup(email) : NULL;
	t->value = pt_strdup(email ? email : "");
	p->ntrailers++;
	return t->key && t->value ? 0 : PT_ENOMEM;
}

/*
 * Trailers given on the list (on the patch or, for the whole series, on
 * its cover letter) join the patch's own, as maintainers' tools apply
 * them, so that the review features see them.
 */
static int add_list_review(const char *kind, const char *name,
			   const char *email, void *ctx)
{
	return add_trailer(ctx, kind, name, email);
}

/*
 * The strongest reasons in words for each task, of those explain_shown()
 * lets through: explain lists every term of the sum, a check or a reply
 * only the ones that state a fact of the patch.
 */
static void fill_reasons(struct verdict *v)
{
	size_t i, m, idx[VERDICT_MAX_REASONS];
	int k;

	for (k = 0; k < TRIAGE_NTASKS; k++) {
		const struct triage_score *t = &v->res.task[k];

		m = explain_pick(idx, VERDICT_MAX_REASONS, t->why, t->nwhy, 0);
		for (i = 0; i < m; i++) {
			v->why[k][i].text = t->why[idx[i]].text;
			v->why[k][i].direction = t->why[idx[i]].weight >= 0
							 ? "raises"
							 : "lowers";
		}
		v->nwhy[k] = m;
	}
}

static void review_text(struct verdict *v, const struct patch *p)
{
	unsigned rb = patch_count_trailers(p, TRAILER_REVIEWED);
	unsigned tb = patch_count_trailers(p, TRAILER_TESTED);

	if (!v->have_thread) {
		snprintf(v->review, sizeof(v->review),
			 "%u " TRAILER_KEY_REVIEWED ", %u " TRAILER_KEY_TESTED,
			 rb, tb);
		return;
	}
	snprintf(v->review, sizeof(v->review),
		 "%u replies from %u "
		 "reviewers, %u " TRAILER_KEY_REVIEWED
		 ", %u " TRAILER_KEY_TESTED,
		 v->tf.replies, v->tf.reviewers, rb, tb);
}

int verdict_score(struct verdict *v, struct triage *t,
		  const struct verdict_lists *lists, struct patch *p)
{
	int64_t tpid = 0;
	int rc = 0;

	memset(v, 0, sizeof(*v));
	v->have_thread = !thread_of(lists, p, &tpid, &v->tf);
	pt_error_clear();
	if (!v->have_thread)
		memset(&v->tf, 0, sizeof(v->tf));
	if (v->have_thread && lists->lk)
		rc = lookup_list_reviews(lists->lk, tpid, add_list_review, p);
	if (!rc)
		rc = triage_score(&v->res, t, p,
				  v->have_thread ? &v->tf : NULL);
	/* list mail the lists know: the archive model's risk, as of now */
	if (!rc && v->have_thread)
		rc = triage_score_archive(&v->res, t, tpid,
					  (int64_t)time(NULL));
	if (rc)
		return rc;
	review_text(v, p);
	fill_reasons(v);
	return 0;
}

void verdict_clear(struct verdict *v)
{
	triage_result_clear(&v->res);
	memset(v, 0, sizeof(*v));
}

/* "WHAT 0.42 (model VERSION): reason; reason; reason" */
static int describe(struct buf *b, const struct verdict *v, enum triage_task k,
		    const char *what)
{
	const struct triage_score *t = &v->res.task[k];
	size_t i;
	int rc;

	rc = buf_addf(b, "%s %.2f (model %s)", what, t->p, t->version);
	for (i = 0; !rc && i < v->nwhy[k] && i < VERDICT_CHECK_REASONS; i++)
		rc = buf_addf(b, "%s%s", i ? "; " : ": ", v->why[k][i].text);
	return rc;
}

int verdict_check(char **out, const struct verdict *v, enum triage_task k,
		  const struct patch *p, const char *fixes)
{
	struct buf b = BUF_INIT;
	int rc;

	*out = NULL;
	if (!v->res.task[k].have || (k == TRIAGE_FIX && patch_is_tagged_fix(p)))
		return 0;
	if (k == TRIAGE_RISK)
		rc = describe(&b, v, k, "p(bug)");
	else
		rc = describe(&b, v, k, "untagged fix? p(fix)");
	if (!rc && k == TRIAGE_FIX)
		rc = buf_addf(&b, "; consider Cc: stable and %s",
			      fixes ? fixes : "Fixes:");
	if (rc) {
		buf_free(&b);
		return rc;
	}
	*out = buf_detach(&b, NULL);
	return *out ? 0 : PT_ENOMEM;
}
