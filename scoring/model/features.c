/*
 * features.c - one patch to one feature vector (features.h) as of the
 * patch's date.  It owns the feature names, the hashed sparse entries
 * and the assembly of the vector; the parts are in features_text.c (the
 * changelog and its trailers), features_code.c (the diff: detectors and
 * size) and features_db.c (the as-of queries against the miner's
 * tables), sharing features_int.h.
 */
#include "scoring/model/features.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scoring/model/bughist.h"
#include "scoring/model/features_int.h"
#include "scoring/model/histsum.h"

#define MAX_TOKENS 20000u /* hashed entries before de-duplication */

static const struct feat_info {
	const char *name, *desc;
	enum feat_group group;
} infos[FEAT_NTAB] = {
#define FEAT_INFO(id, name, group, desc) [FEAT_##id] = { name, desc, group },
	FEAT_TABLE(FEAT_INFO)
#undef FEAT_INFO
};

static const char *const group_names[FEAT_NGROUPS] = {
	"size",	   "history", "experience",   "code",  "review",
	"testing", "process", "conversation", "label", "text",
};

static const char *name_list[FEAT_NTAB + 1];

const char *feat_name(enum feat_id id)
{
	return id < FEAT_NTAB ? infos[id].name : "?";
}

const char *feat_desc(enum feat_id id)
{
	return id < FEAT_NTAB ? infos[id].desc : "?";
}

enum feat_group feat_group_of(enum feat_id id)
{
	return id < FEAT_NTAB ? infos[id].group : FEAT_G_TEXT;
}

const char *feat_group_name(enum feat_group g)
{
	return g < FEAT_NGROUPS ? group_names[g] : "?";
}

const char *const *feat_names(void)
{
	size_t i;

	if (!name_list[0])
		for (i = 0; i < FEAT_NTAB; i++)
			name_list[i] = infos[i].name;
	return name_list;
}

int feat_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < FEAT_NTAB; i++)
		if (!strcmp(infos[i].name, name))
			return (int)i;
	return -1;
}

void feat_vec_free(struct feat_vec *v)
{
	size_t i;

	if (!v)
		return;
	if (v->sp_names)
		for (i = 0; i < v->nsp; i++)
			free(v->sp_names[i]);
	free(v->sp_names);
	free(v->sp);
	free(v->release_tag);
	free(v->release);
	free(v->top_dir);
	free(v->phrase);
	memset(v, 0, sizeof(*v));
}

uint32_t feat_hash(const char *ns, const char *tok, size_t len,
		   unsigned hash_bits)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (; *ns; ns++) {
		h ^= (unsigned char)*ns;
		h *= 16777619u;
	}
	h ^= ':';
	h *= 16777619u;
	for (i = 0; i < len; i++) {
		h ^= (unsigned char)tok[i];
		h *= 16777619u;
	}
	return h & ((1u << hash_bits) - 1);
}

/* ---- sparse entries ---------------------------------------------------- */

static const char *const ns_names[] = { "s", "w", "b", "+", "-", "v", "p" };

int feat_tok_add(struct toks *t, int ns, const char *s, size_t len)
{
	struct tok *k;

	if (t->n >= MAX_TOKENS)
		return 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		void *p = pt_reallocarray(t->v, cap, sizeof(*t->v));

		if (!p)
			return PT_ENOMEM;
		t->v = p;
		t->cap = cap;
	}
	k = &t->v[t->n];
	k->index = feat_hash(ns_names[ns], s, len, t->bits);
	k->ns = (unsigned char)ns;
	k->name = NULL;
	if (t->names) { /* "ns:token", without printf: one per token */
		size_t nl = strlen(ns_names[ns]);

		if (!(k->name = pt_malloc(nl + len + 2)))
			return PT_ENOMEM;
		memcpy(k->name, ns_names[ns], nl);
		k->name[nl] = ':';
		memcpy(k->name + nl + 1, s, len);
		k->name[nl + 1 + len] = '\0';
	}
	t->n++;
	return 0;
}

static int cmp_tok(const void *a, const void *b)
{
	const struct tok *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Unique per namespace, each worth 1/sqrt(unique tokens in the
 * namespace): long changelogs and big diffs do not drown short ones.
 */
static int toks_to_vec(struct toks *t, struct feat_vec *v)
{
	size_t i, m = 0, count[NNS] = { 0 };

	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_tok);
	for (i = 0; i < t->n; i++) {
		if (m && t->v[m - 1].ns == t->v[i].ns &&
		    t->v[m - 1].index == t->v[i].index) {
			free(t->v[i].name);
			continue;
		}
		t->v[m++] = t->v[i];
		count[t->v[i].ns]++;
	}
	t->n = m;
	v->sp = pt_calloc(m + 1, sizeof(*v->sp));
	if (!v->sp)
		return PT_ENOMEM;
	if (t->names && !(v->sp_names = pt_calloc(m + 1, sizeof(char *))))
		return PT_ENOMEM;
	for (i = 0; i < m; i++) {
		v->sp[i].index = t->v[i].index;
		v->sp[i].value = (float)(1.0 / sqrt((double)count[t->v[i].ns]));
		if (v->sp_names) {
			v->sp_names[i] = t->v[i].name;
			t->v[i].name = NULL;
		}
	}
	v->nsp = v->spcap = m;
	return 0;
}

static void toks_free(struct toks *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
}

/* ---- the vector -------------------------------------------------------- */

static int64_t asof_date(const struct patch *p)
{
	if (p->source == PATCH_FROM_GIT && p->commit_date)
		return p->commit_date;
	return p->author_date;
}

/*
 * The date the release cycle is read at: when the patch was written.  A
 * commit's author date, not its commit date: a posted patch has no
 * commit date yet, and a commit applied to a -next branch during rc5 was
 * written against the mainline at rc5 or before, like the patch a
 * maintainer reads when it is posted (its Date:).
 */
static int64_t cycle_date(const struct patch *p)
{
	return p->author_date ? p->author_date : asof_date(p);
}

static void patch_process(const struct patch *p, float *t)
{
	int64_t local = p->author_date + (int64_t)p->author_tz * 60;

	t[FEAT_HOUR] = (float)(((local % 86400) + 86400) % 86400 / 3600);
	if (p->source == PATCH_FROM_GIT) {
		t[FEAT_LATENCY] =
			(float)((double)(p->commit_date - p->author_date) /
				DAY);
		t[FEAT_AUTHOR_IS_COMMITTER] =
			p->author.email && p->committer.email &&
			!strcasecmp(p->author.email, p->committer.email);
	} else {
		t[FEAT_VERSION] = (float)p->subject.version;
		t[FEAT_SERIES] =
			(float)(p->subject.total ? p->subject.total : 1);
		t[FEAT_RESEND] = p->subject.is_resend;
	}
}

static void thread_features(const struct feat_thread *th, float *t)
{
	if (!th || !th->known)
		return;
	t[FEAT_C_REPLIES] = (float)th->replies;
	t[FEAT_C_REVIEWERS] = (float)th->reviewers;
	t[FEAT_C_INLINE] = (float)th->inline_comments;
	t[FEAT_C_VERSIONS] = (float)th->versions;
	t[FEAT_C_NEGATIVE] = (float)th->negative;
	if (th->versions)
		t[FEAT_VERSION] = (float)th->versions;
}

int feat_compute(struct feat_vec *out, struct feat_ctx *c,
		 const struct patch *p, const struct feat_thread *thread,
		 unsigned hash_bits, unsigned flags)
{
	struct toks tk = { NULL, 0, 0, hash_bits, (flags & FEAT_NAMES) != 0 };
	struct buf cl = BUF_INIT;
	const char *subj = p->subject.clean ? p->subject.clean : "";
	float *t = out->tab;
	int64_t id = 0;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < FEAT_NTAB; i++)
		t[i] = NAN;
	out->date = asof_date(p);
	out->from_mail = p->source != PATCH_FROM_GIT;
	rc = feat_clean_changelog(&cl, p);
	if (!rc)
		rc = feat_add_words(&tk, NS_SUBJ, subj, strlen(subj), 0);
	if (!rc)
		rc = feat_subject_tokens(&tk, subj);
	if (!rc)
		rc = feat_add_words(&tk, NS_WORD, subj, strlen(subj), 1);
	if (!rc)
		rc = feat_add_words(&tk, NS_WORD, cl.ptr, cl.len, 1);
	if (!rc)
		rc = feat_find_phrase(out, subj, cl.ptr);
	if (!rc)
		rc = feat_code_features(p, out, &tk);
	if (rc)
		goto out;
	feat_trailer_counts(p, p->message ? p->message : "", t);
	patch_process(p, t);
	thread_features(thread, t);
	if (c && c->db) {
		id = feat_mined_id(c, p);
		if (id) {
			feat_history_mined(c, id, t);
			feat_reviews_mined(c, id, t);
			bughist_mined(c->bh, id, t);
		} else {
			feat_history_unmined(c, p, out->date, t);
			feat_reviews_unmined(c, p, out->date, t);
			rc = feat_files_unmined(c, p, out->date, t);
			if (!rc && c->hs)
				rc = histsum_bugs(c->hs, p, out->date, t);
			else if (!rc)
				rc = bughist_unmined(c->bh, p, out->date, t);
		}
		if (!rc)
			rc = feat_cycle_asof(c, cycle_date(p), t, out);
	}
	if (!rc)
		rc = toks_to_vec(&tk, out);
out:
	toks_free(&tk);
	buf_free(&cl);
	if (rc)
		feat_vec_free(out);
	return rc;
}
