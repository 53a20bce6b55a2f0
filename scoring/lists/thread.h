/*
 * thread.h - list mail threaded into what a maintainer sees: series
 * (grouped by thread root, version, size and author; complete when all
 * n of m have arrived, in any order), the versions of a series linked to
 * each other, and the replies with the review they carry (trailers given
 * on the list, inline comments, tested claims, sentiment, test-bot
 * reports).  Pure: no network.  The IMAP reader and the archive import
 * both feed messages here; the state lives in the tables of schema 3
 * (messages, message_refs, series, series_versions, patches, replies,
 * mail_reviews).
 */
#ifndef PT_THREAD_H
#define PT_THREAD_H

#include <stddef.h>
#include <stdint.h>

#include "scoring/store/db.h"
#include "scoring/patch/patch.h"
#include "scoring/util/pt.h"

enum thread_kind {
	THREAD_OTHER = 0, /* a new thread that is not a patch */
	THREAD_PATCH,
	THREAD_COVER,
	THREAD_REPLY,
};

const char *thread_kind_name(enum thread_kind k);

struct thread;

/*
 * lexicon: a sentiment word list ("word score" per line, '#' comments;
 * conf/sentiment.txt), or NULL for no sentiment scores.
 */
int thread_open(struct thread **out, struct db *db, const char *lexicon);
void thread_free(struct thread *t);

struct thread_result {
	enum thread_kind kind;
	int duplicate; /* Message-ID already stored: nothing done */
	char *message_id;
	int64_t series_id;	/* 0 when none (yet) */
	int64_t patch_id;	/* replies: 0 for the cover / whole series */
	int complete;		/* the series is complete after this message */
	int64_t prev_series_id; /* the previous version, when linked */
	size_t attached;	/* earlier replies this message adopted */
};

void thread_result_clear(struct thread_result *r);

/* Parse (patch_from_mail) and thread one raw message. */
int thread_add_mail(struct thread *t, const char *raw, size_t len,
		    const char *source, struct thread_result *res);
/* Thread an already parsed message; body is its text for replies. */
int thread_add_patch(struct thread *t, const struct patch *p,
		     const char *source, struct thread_result *res);

/* What the replies of a patch (and of its cover letter) say. */
struct thread_features {
	unsigned replies;
	unsigned reviewers; /* distinct people, not the author/bots */
	unsigned inline_comments;
	unsigned tested_claims;
	double sentiment; /* mean over replies with scored words */
	unsigned reviewed_by, acked_by, tested_by, nacked_by;
	unsigned bot_reports, bot_failures;
	char bot_archs[128]; /* space-separated, distinct */
	unsigned version;
	unsigned versions_before; /* linked earlier versions */
};

int thread_patch_features(struct thread *t, int64_t patch_id,
			  struct thread_features *out);

/* Look a stored patch up by Message-ID (without <>). */
int thread_find_patch(struct thread *t, const char *message_id,
		      int64_t *patch_id, int64_t *series_id);

/* ---- text analysis (exposed for tests and the archive import) ------ */

struct thread_text {
	unsigned new_lines;	  /* non-quoted, non-blank lines */
	unsigned inline_comments; /* new-text blocks between quoted lines */
	unsigned tested_claims;
	unsigned quoted_lines; /* lines quoted from what it answers */
	/* the most machines a tested claim names ("tested on 3 boards"),
	   1 for a claim naming none, 0 without a claim */
	unsigned tested_scale;
	int sentiment_words;
	double sentiment_sum;
};

void thread_analyse_text(struct thread *t, const char *text, size_t len,
			 struct thread_text *out);
/* A reply's text: its message and, after "---", its notes. */
int thread_reply_body(struct buf *out, const struct patch *p);
/*
 * How much of a reply's text is the replier's own: all of it but an
 * original message pasted below without quote markers, as Outlook does
 * ("-----Original Message-----", or a From:/Sent:/Subject: block).
 */
size_t thread_reply_own_len(const char *text);

struct thread_bot {
	const char *name;    /* "0day", "kernelci", "syzbot",
				      "patchwork-bot"; NULL: not a bot */
	const char *verdict; /* "success", "failure", "warning",
				      "error", "applied", "report" */
	char arch[64];
};

void thread_detect_bot(const struct patch *p, const char *text,
		       struct thread_bot *out);

#endif
