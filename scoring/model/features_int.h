/*
 * features_int.h - what the files of the feature vector share: the
 * prepared queries and struct feat_ctx, the sparse entries being
 * collected, and the functions features.c calls in features_text.c,
 * features_code.c and features_db.c.  Private to features.c,
 * features_text.c, features_code.c and features_db.c: only they include
 * it; the API is features.h.
 */
#ifndef PT_FEATURES_INT_H
#define PT_FEATURES_INT_H

#include <ctype.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "scoring/model/features.h"
#include "scoring/util/pt.h"

#define DAY 86400.0

/* The as-of queries (features_db.c), prepared once per context. */
enum {
	Q_COMMIT,
	Q_FEATURES,
	Q_REVIEWS,
	Q_TAG,
	Q_RELEASE,
	Q_AUTHOR,
	Q_REVIEWER,
	Q_FILE,
	Q_AUTHOR_FILES,
	NQ
};

struct feat_ctx {
	struct db *db;
	int64_t repo_id;
	sqlite3_stmt *st[NQ];
	struct histsum *hs; /* summaries for unmined patches (histsum.c) */
	struct bughist *bh; /* the past-bug columns (bughist.c) */
};

struct tok {
	uint32_t index;
	unsigned char ns; /* namespace number, for per-namespace scaling */
	char *name;	  /* with FEAT_NAMES */
};

struct toks {
	struct tok *v;
	size_t n, cap;
	unsigned bits;
	int names;
};

/* The namespaces of the hashed entries (ns_names in features.c). */
enum {
	NS_SUBJ,
	NS_WORD,
	NS_BIGRAM,
	NS_ADD,
	NS_DEL,
	NS_VERB,   /* the subject's first word after its prefix, and pair */
	NS_PREFIX, /* the subject's component prefix ("net/ice") */
	NNS
};

static inline int word_char(int c)
{
	return isalnum(c) || c == '_';
}

/* ---- features.c -------------------------------------------------------- */

int feat_tok_add(struct toks *t, int ns, const char *s, size_t len);

/* ---- features_text.c --------------------------------------------------- */

/* Lowercased words of s into ns (and bigrams into NS_BIGRAM). */
int feat_add_words(struct toks *t, int ns, const char *s, size_t len,
		   int bigrams);
/* The subject's component prefix, first word and first pair. */
int feat_subject_tokens(struct toks *t, const char *subj);
/* The changelog the model may read, in cl (subject not included). */
int feat_clean_changelog(struct buf *cl, const struct patch *p);
/* The first telling phrase of subj or cl into v->phrase. */
int feat_find_phrase(struct feat_vec *v, const char *subj, const char *cl);
/* The trailer, report, testing and revert columns from p and msg. */
void feat_trailer_counts(const struct patch *p, const char *msg, float *t);

/* ---- features_code.c --------------------------------------------------- */

/* The code, file-kind and size columns; code tokens into tk. */
int feat_code_features(const struct patch *p, struct feat_vec *v,
		       struct toks *tk);

/* ---- features_db.c ----------------------------------------------------- */

/* The mined commit's id, or 0. */
int64_t feat_mined_id(struct feat_ctx *c, const struct patch *p);
void feat_history_mined(struct feat_ctx *c, int64_t id, float *t);
void feat_reviews_mined(struct feat_ctx *c, int64_t id, float *t);
/* A patch that is not mined: the same columns from earlier records. */
void feat_history_unmined(struct feat_ctx *c, const struct patch *p,
			  int64_t date, float *t);
void feat_reviews_unmined(struct feat_ctx *c, const struct patch *p,
			  int64_t date, float *t);
int feat_files_unmined(struct feat_ctx *c, const struct patch *p, int64_t date,
		       float *t);
/*
 * The mainline's release cycle at date (its newest mainline tag, never
 * a stable one): rc, late rc, days since that tag and since the newest
 * mainline final release; the tag names into v.
 */
int feat_cycle_asof(struct feat_ctx *c, int64_t date, float *t,
		    struct feat_vec *v);

#endif
