/*
 * range.c - collecting the commits: the branch's commits since the merge
 * base and the upstream ids their marker lines name, the range's commits
 * with their tags, changed files and build facts, which of them the
 * branch already has (ancestry, marker, patch-id) and the series they
 * form.
 */
#include "scoring/stable/stable_int.h"

#include "scoring/util/fnv.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- the branch ------------------------------------------------------- */

int stable_put_cb(git_commit *c, void *ctx)
{
	return stable_oidmap_put(ctx, git_commit_id(c), 0);
}

/* A branch commit: remember it and the upstream id it names. */
int stable_branch_cb(git_commit *c, void *ctx)
{
	struct stable_set *s = ctx;
	struct stable_priv *p = s->priv;
	const char *msg = git_commit_message(c);
	struct bcommit *b;
	enum stable_match kind;
	char hex[41];
	git_oid up;
	int rc;

	rc = stable_oidmap_put(&p->only, git_commit_id(c), p->nb);
	if (rc)
		return rc;
	if (p->nb == p->bcap) {
		size_t cap = p->bcap ? p->bcap * 2 : 256;

		b = pt_reallocarray(p->b, cap, sizeof(*b));
		if (!b)
			return PT_ENOMEM;
		p->b = b;
		p->bcap = cap;
	}
	b = &p->b[p->nb];
	git_oid_cpy(&b->id, git_commit_id(c));
	b->kind = STABLE_MATCH_NONE;
	s->branch_commits++;
	if (msg && stable_find_marker(hex, &kind, msg, strlen(msg))) {
		b->kind = kind;
		s->branch_marked++;
		if (!stable_resolve_commit(&up, p->repo, hex)) {
			rc = stable_oidmap_put(&p->upstream, &up, p->nb);
			if (rc)
				return rc;
		}
	}
	p->nb++;
	return 0;
}

/* ---- the range -------------------------------------------------------- */

static char *author_of(const git_commit *c)
{
	const git_signature *a = git_commit_author(c);
	struct buf b = BUF_INIT;

	if (a && buf_addf(&b, "%s <%s>", a->name ? a->name : "",
			  a->email ? a->email : ""))
		return NULL;
	return buf_detach(&b, NULL);
}

static uint64_t email_hash(const git_signature *sig)
{
	uint64_t h = FNV_INIT;
	const char *e = sig && sig->email ? sig->email : "";

	for (; *e; e++)
		h = fnv_byte(h, (unsigned char)tolower((unsigned char)*e));
	return h;
}

int stable_range_cb(git_commit *c, void *ctx)
{
	struct stable_set *s = ctx;
	struct stable_commit *sc, *nc;
	const char *msg = git_commit_message(c);
	const char *sum = git_commit_summary(c);
	struct stable_priv *p = s->priv;
	size_t cap;
	int rc;

	if (s->n == p->ccap) {
		struct changes *nch;
		struct skey *nsk;

		cap = p->ccap ? p->ccap * 2 : 64;
		nc = pt_reallocarray(s->c, cap, sizeof(*nc));
		if (!nc)
			return PT_ENOMEM;
		s->c = nc;
		nch = pt_reallocarray(p->rch, cap, sizeof(*nch));
		if (!nch)
			return PT_ENOMEM;
		p->rch = nch;
		nsk = pt_reallocarray(p->sk, cap, sizeof(*nsk));
		if (!nsk)
			return PT_ENOMEM;
		p->sk = nsk;
		p->ccap = cap;
	}
	memset(&p->rch[s->n], 0, sizeof(p->rch[s->n]));
	sc = &s->c[s->n];
	memset(sc, 0, sizeof(*sc));
	git_oid_tostr(sc->id, sizeof(sc->id), git_commit_id(c));
	sc->commit_date = (int64_t)git_commit_time(c);
	sc->subject = pt_strdup(sum ? sum : "");
	sc->author = author_of(c);
	sc->fix_subject = stable_says_fix(sc->subject ? sc->subject : "");
	p->sk[s->n].author = email_hash(git_commit_author(c));
	p->sk[s->n].committer = email_hash(git_commit_committer(c));
	p->sk[s->n].when = sc->commit_date;
	p->sk[s->n].idx = s->n;
	s->n++;
	if (!sc->subject || !sc->author)
		return PT_ENOMEM;
	rc = stable_oidmap_put(&p->range, git_commit_id(c), s->n - 1);
	if (!rc && msg)
		rc = stable_read_tags(sc, p->repo, msg);
	if (!rc)
		rc = stable_commit_changes(&p->rch[s->n - 1], p->repo, c);
	sc->nfiles = (unsigned)p->rch[s->n - 1].n;
	if (!rc)
		stable_build_facts(sc, p->rch[s->n - 1].f, p->rch[s->n - 1].n);
	return rc;
}

/* ---- already in the branch -------------------------------------------- */

/* A path signature as a map key. */
static void sig_oid(git_oid *out, uint64_t sig)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->id, &sig, sizeof(sig));
}

/* Patch-id of changes when a branch commit changes the same paths. */
int stable_maybe_patchid(git_oid *out, struct stable_priv *p,
			 const struct changes *ch)
{
	git_oid k;
	int rc;

	sig_oid(&k, ch->sig);
	if (!ch->n || !stable_oidmap_get(&p->sigs, &k))
		return 0;
	rc = stable_changes_patchid(out, p->repo, ch);
	return rc ? rc : 1;
}

int stable_match_commit(struct stable_set *s, size_t i)
{
	struct stable_priv *p = s->priv;
	struct stable_commit *sc = &s->c[i];
	struct oment *e;
	git_oid id, pid;
	int rc;

	git_oid_fromstr(&id, sc->id);
	/* not after the base means reachable from the base, so from the tip */
	if (stable_oidmap_get(&p->only, &id) ||
	    !stable_oidmap_get(&p->after_base, &id)) {
		sc->match = STABLE_MATCH_ANCESTOR;
		memcpy(sc->backport, sc->id, sizeof(sc->backport));
		return 0;
	}
	e = stable_oidmap_get(&p->upstream, &id);
	if (e) {
		sc->match = p->b[e->val].kind;
		git_oid_tostr(sc->backport, 41, &p->b[e->val].id);
		return 0;
	}
	rc = stable_maybe_patchid(&pid, p, &p->rch[i]);
	if (rc <= 0)
		return rc;
	e = stable_oidmap_get(&p->patchids, &pid);
	if (e) {
		sc->match = STABLE_MATCH_PATCHID;
		git_oid_tostr(sc->backport, 41, &p->b[e->val].id);
	}
	return 0;
}

/* Patch-ids of the branch commits that name no upstream commit. */
int stable_branch_patchids(struct stable_priv *p,
			   const struct pt_progress *progress)
{
	struct pt_progress_report r = {
		"patch ids of the branch", "commits", 0, p->nb, 0, NULL
	};
	struct changes ch;
	git_oid k, pid;
	size_t i;
	int rc = 0;

	for (i = 0; i < p->nb && !rc; i++) {
		r.done = i;
		pt_progress_report(progress, &r);
		if (p->b[i].kind != STABLE_MATCH_NONE)
			continue;
		rc = stable_lookup_changes(&ch, p->repo, &p->b[i].id);
		if (rc)
			break;
		if (ch.n) {
			sig_oid(&k, ch.sig);
			rc = stable_oidmap_put(&p->sigs, &k, i);
			if (!rc)
				rc = stable_changes_patchid(&pid, p->repo, &ch);
			if (!rc)
				rc = stable_oidmap_put(&p->patchids, &pid, i);
		}
		stable_changes_clear(&ch);
	}
	r.done = i;
	if (!rc)
		pt_progress_report(progress, &r);
	return rc;
}

/* ---- series ----------------------------------------------------------- */

static int skey_cmp(const void *a, const void *b)
{
	const struct skey *x = a, *y = b;

	if (x->author != y->author)
		return x->author < y->author ? -1 : 1;
	if (x->committer != y->committer)
		return x->committer < y->committer ? -1 : 1;
	if (x->when != y->when)
		return x->when < y->when ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int stable_is_tagged_cand(const struct stable_set *s, size_t i)
{
	return stable_is_candidate(s, i) && stable_tier(&s->c[i]) > 0;
}

/* One series k[0..n): its length, and each commit's nearest tagged one. */
static void link_series(struct stable_set *s, const struct skey *k, size_t n)
{
	size_t a, b, best, d, bd;

	for (a = 0; a < n; a++) {
		struct stable_commit *c = &s->c[k[a].idx];

		c->series_len = n;
		best = bd = SIZE_MAX;
		for (b = 0; b < n; b++) {
			if (b == a || !stable_is_tagged_cand(s, k[b].idx))
				continue;
			d = a < b ? b - a : a - b;
			if (d < bd) {
				bd = d;
				best = k[b].idx;
			}
		}
		c->has_sibling = best != SIZE_MAX;
		c->sibling = c->has_sibling ? best : 0;
	}
}

/*
 * Group the range into series (stable.h, STABLE_SERIES_GAP): sort by
 * author, committer and commit time, and cut where any of them changes
 * or the time jumps.  Order-free, so merges of topic branches do not
 * split a series.
 */
int stable_find_series(struct stable_set *s)
{
	struct skey *k = s->priv->sk;
	size_t i, start;

	if (!s->n)
		return 0;
	qsort(k, s->n, sizeof(*k), skey_cmp);
	for (start = 0, i = 1; i <= s->n; i++) {
		if (i < s->n && k[i].author == k[i - 1].author &&
		    k[i].committer == k[i - 1].committer &&
		    k[i].when - k[i - 1].when <= STABLE_SERIES_GAP)
			continue;
		link_series(s, k + start, i - start);
		start = i;
	}
	return 0;
}
