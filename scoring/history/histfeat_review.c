/*
 * histfeat_review.c - reviewers and subsystems of the history features:
 * each commit's MAINTAINERS (its own blob, parsed once for a few commits
 * in a row, emails through .mailmap), the sections covering its files
 * (commit_files.subsystem), and for every Reviewed-by, Acked-by and
 * Tested-by person the reviews row: is_maintainer, prior and prior_bug as
 * known at the commit's date.
 */
#include "scoring/history/histfeat_int.h"

#include <ctype.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/history/maintainers.h"
#include "scoring/store/db.h"
#include "scoring/util/strmap.h"

#define MAX_HITS 64

/* ---- MAINTAINERS ---------------------------------------------------------- */

static void canon_emails(struct hctx *x, struct maint *m)
{
	size_t i, k, j;

	if (!x->mm)
		return;
	for (i = 0; i < m->n; i++)
		for (k = 0; k < m->s[i].npeople; k++) {
			const char *rn, *re;
			char *dup;

			if (git_mailmap_resolve(&rn, &re, x->mm, "",
						m->s[i].people[k])) {
				git_error_clear();
				continue;
			}
			if (!strcmp(re, m->s[i].people[k]) ||
			    !(dup = pt_strdup(re)))
				continue;
			for (j = 0; dup[j]; j++)
				dup[j] = (char)tolower((unsigned char)dup[j]);
			free(m->s[i].people[k]);
			m->s[i].people[k] = dup;
		}
}

int histfeat_maint_for(const struct maint **out, struct hctx *x,
		       const struct hcommit *c)
{
	struct mcache *slot;
	git_blob *blob = NULL;
	git_oid id;
	size_t i;
	int rc = 0;

	*out = NULL;
	if (!c->maint[0])
		return 0;
	for (i = 0; i < MAINT_CACHE; i++)
		if (x->cache[i].m && !strcmp(x->cache[i].blob, c->maint)) {
			*out = x->cache[i].m;
			return 0;
		}
	if (git_oid_fromstr(&id, c->maint) ||
	    git_blob_lookup(&blob, x->repo, &id)) {
		git_error_clear();
		return 0; /* missing blob: as if there were none */
	}
	slot = &x->cache[x->cache_next++ % MAINT_CACHE];
	maint_free(slot->m);
	slot->m = NULL;
	rc = maint_parse(&slot->m, git_blob_rawcontent(blob),
			 (size_t)git_blob_rawsize(blob), NULL, NULL);
	if (!rc) {
		canon_emails(x, slot->m);
		snprintf(slot->blob, sizeof(slot->blob), "%s", c->maint);
		*out = slot->m;
	}
	git_blob_free(blob);
	return rc;
}

/* ---- reviewers and subsystems ---------------------------------------------- */

static int reviewer_is_maint(const struct maint *m, const struct hit_set *h,
			     const char *email)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		if (maint_has_person(m, h->sec[i], email))
			return 1;
	return 0;
}

int histfeat_match_files(struct hit_set *h, struct hctx *x, struct hcommit *c,
			 const struct maint *m)
{
	struct maint_hit hits[MAX_HITS];
	size_t i, k, j, nh;
	int rc = 0;

	for (i = 0; i < c->nfiles && !rc; i++) {
		struct hfile *f = &c->files[i];

		nh = 0;
		if (m)
			maint_match(m, f->path, hits, MAX_HITS, &nh);
		if (nh) {
			f->subsystem = m->s[hits[0].section].name;
		} else {
			const char *sl = strchr(f->path, '/');
			struct strmap_entry *e;

			e = strmap_get(&x->subs, f->path,
				       sl ? (size_t)(sl - f->path) : 0);
			f->subsystem = e ? e->key : "";
		}
		for (k = 0; k < nh && !rc; k++) {
			for (j = 0; j < h->n && h->sec[j] != hits[k].section;
			     j++)
				;
			if (j < h->n)
				continue;
			rc = push(&h->sec, &h->n, sizeof(*h->sec));
			if (!rc)
				h->sec[h->n - 1] = hits[k].section;
		}
	}
	return rc;
}

int histfeat_write_reviews(struct hctx *x, sqlite3_stmt *st, struct hcommit *c,
			   const struct maint *m, const struct hit_set *h)
{
	size_t i, k;
	int rc = 0;

	for (i = 0; i < c->nrevs && !rc; i++) {
		struct strmap_entry *e;
		struct pstate *p;
		const char *email;
		size_t nb = 0;

		rc = strmap_put_id(&e, NULL, &x->people, c->revs[i].person);
		if (!rc && !e->v.p && !(e->v.p = pt_calloc(1, sizeof(*p))))
			rc = PT_ENOMEM;
		if (rc)
			break;
		p = e->v.p;
		for (k = 0; k < p->nbug; k++)
			nb += p->bug_dates[k] < c->cdate;
		e = strmap_get_id(&x->emails, c->revs[i].person);
		email = e ? e->v.p : NULL;
		sqlite3_bind_int64(st, 1, c->id);
		sqlite3_bind_int64(st, 2, c->revs[i].person);
		sqlite3_bind_int(st, 3, c->revs[i].kind);
		if (m && email)
			sqlite3_bind_int(st, 4, reviewer_is_maint(m, h, email));
		else
			sqlite3_bind_null(st, 4);
		sqlite3_bind_int64(st, 5, (int64_t)p->count);
		sqlite3_bind_int64(st, 6, (int64_t)nb);
		rc = sqlite3_step(st) == SQLITE_DONE
			     ? 0
			     : db_error(x->db, "saving a review");
		sqlite3_reset(st);
	}
	return rc;
}

int histfeat_record_reviews(struct hctx *x, struct hcommit *c)
{
	size_t i, k;
	int rc = 0;

	for (i = 0; i < c->nrevs && !rc; i++) {
		struct strmap_entry *e;
		struct pstate *p;

		for (k = 0; k < i && c->revs[k].person != c->revs[i].person;
		     k++)
			;
		if (k < i)
			continue;
		e = strmap_get_id(&x->people, c->revs[i].person);
		if (!e)
			continue;
		p = e->v.p;
		p->count++;
		if (c->bug) {
			size_t n = p->nbug;

			rc = push(&p->bug_dates, &n, sizeof(*p->bug_dates));
			if (!rc)
				p->bug_dates[p->nbug++] = c->discovered;
		}
	}
	return rc;
}
