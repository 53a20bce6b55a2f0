/*
 * features_text.c - the changelog for the model: trailer-like lines
 * dropped (the fix label is defined by Fixes:/Cc: stable, so the text
 * must not carry them), the words, bigrams and subject tokens, the
 * telling phrase, and the trailer and body facts (reviews, reports,
 * testing claims).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "scoring/model/features_int.h"

/* ---- text -------------------------------------------------------------- */

/*
 * Lines that look like trailers or tags of the fix label, wherever they
 * are in the message (DPDK puts Fixes: and Cc: stable in a paragraph of
 * their own above the sign-offs).
 */
static const char *const dropped_keys[] = {
	"fixes",
	"cc",
	"link",
	"closes",
	"signed-off-by",
	"reviewed-by",
	"acked-by",
	"tested-by",
	"reported-by",
	"suggested-by",
	"co-developed-by",
	"reported-and-tested-by",
	"bugzilla id",
	"coverity issue",
	"message-id",
	"change-id",
	"bug",
	"buglink",
	NULL,
};

static int is_dropped_line(const char *s, size_t len)
{
	const char *colon = memchr(s, ':', len);
	size_t k, klen;

	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	colon = memchr(s, ':', len);
	if (!colon)
		return 0;
	klen = (size_t)(colon - s);
	for (k = 0; dropped_keys[k]; k++)
		if (strlen(dropped_keys[k]) == klen &&
		    !strncasecmp(s, dropped_keys[k], klen))
			return 1;
	return 0;
}

/* Lowercased words of s into ns (and bigrams into NS_BIGRAM). */
int feat_add_words(struct toks *t, int ns, const char *s, size_t len,
		   int bigrams)
{
	char prev[64], cur[64];
	size_t i = 0, plen = 0;
	int rc = 0;

	while (i < len && !rc) {
		size_t n = 0;

		while (i < len && !word_char((unsigned char)s[i]))
			i++;
		while (i < len && word_char((unsigned char)s[i])) {
			if (n < sizeof(cur) - 1)
				cur[n++] = (char)tolower((unsigned char)s[i]);
			i++;
		}
		if (n < 2)
			continue;
		rc = feat_tok_add(t, ns, cur, n);
		if (!rc && bigrams && plen) {
			char bi[130];
			int bl = snprintf(bi, sizeof(bi), "%.*s_%.*s",
					  (int)plen, prev, (int)n, cur);

			rc = feat_tok_add(t, NS_BIGRAM, bi, (size_t)bl);
		}
		memcpy(prev, cur, n);
		plen = n;
	}
	return rc;
}

/*
 * "net/ice: fix Tx descriptor" -> prefix "net/ice", verb "fix" and the
 * pair "fix_tx": by convention the subject's first word says what kind
 * of change it is, which a bag of words loses (a "fix" anywhere in the
 * subject is not the same as starting with it).  The prefix is the
 * run of space-free "part: " components at the start.
 */
int feat_subject_tokens(struct toks *t, const char *subj)
{
	char w[2][64], pair[130];
	size_t pos = 0, plen = 0, i, k;
	int rc = 0, pl;

	for (;;) {
		size_t j = pos;

		while (subj[j] && subj[j] != ' ' && subj[j] != ':')
			j++;
		if (j == pos || subj[j] != ':' || subj[j + 1] != ' ')
			break;
		plen = j;
		pos = j + 2;
	}
	if (plen)
		rc = feat_tok_add(t, NS_PREFIX, subj, plen);
	for (k = 0; k < 2 && !rc; k++) {
		char *o = w[k];
		size_t n = 0;

		while (subj[pos] && !word_char((unsigned char)subj[pos]))
			pos++;
		for (i = pos; word_char((unsigned char)subj[i]); i++)
			if (n < sizeof(w[k]) - 1)
				o[n++] = (char)tolower((unsigned char)subj[i]);
		o[n] = '\0';
		pos = i;
		if (!n)
			break;
		if (k == 0)
			rc = feat_tok_add(t, NS_VERB, w[0], n);
		else {
			pl = snprintf(pair, sizeof(pair), "%s_%s", w[0], w[1]);
			rc = feat_tok_add(t, NS_VERB, pair, (size_t)pl);
		}
	}
	return rc;
}

/* The changelog the model may read, in cl (subject not included). */
int feat_clean_changelog(struct buf *cl, const struct patch *p)
{
	const char *s = p->message ? p->message : "";
	const char *end = s + strlen(s);
	int rc = 0;

	while (s < end && !rc) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);

		if (!is_dropped_line(s, len))
			rc = buf_add(cl, s, len) ?: buf_addch(cl, '\n');
		s += len + (nl != NULL);
	}
	return rc;
}

static const char *const phrases[] = {
	"null pointer dereference",
	"use-after-free",
	"use after free",
	"double free",
	"memory leak",
	"out-of-bounds",
	"out of bounds",
	"buffer overflow",
	"integer overflow",
	"deadlock",
	"race condition",
	"uninitialized",
	"segmentation fault",
	"segfault",
	"crash",
	"hang",
	"corruption",
	"kasan",
	"regression",
	"leak",
	"overflow",
	"fix",
	NULL,
};

int feat_find_phrase(struct feat_vec *v, const char *subj, const char *cl)
{
	size_t i;

	for (i = 0; phrases[i]; i++)
		if (strcasestr(subj, phrases[i]) || strcasestr(cl, phrases[i]))
			return (v->phrase = pt_strdup(phrases[i])) ? 0
								   : PT_ENOMEM;
	return 0;
}

static const char *const tested_words[] = {
	"tested on",	"tested with", "tested it",   "tested by running",
	"tested using", "i tested",    "was tested",  "testing on",
	"test result",	"tested-on",   "verified on", "reproduced on",
	NULL,
};

static const char *const bot_words[] = {
	"syzbot",   "syzkaller", "kernel test robot", "lkp@intel.com", "0day",
	"kernelci", "coverity",	 "oss-fuzz",	      "clusterfuzz",   NULL,
};

static int any_word(const char *s, const char *const *w)
{
	for (; *w; w++)
		if (strcasestr(s, *w))
			return 1;
	return 0;
}

void feat_trailer_counts(const struct patch *p, const char *msg, float *t)
{
	size_t i;
	int bot = 0, fixes = 0, stable = 0;

	t[FEAT_N_REVIEWED] = (float)patch_count_trailers(p, TRAILER_REVIEWED);
	t[FEAT_N_ACKED] = (float)patch_count_trailers(p, TRAILER_ACKED);
	t[FEAT_N_TESTED] = (float)patch_count_trailers(p, TRAILER_TESTED);
	t[FEAT_N_REPORTED] = (float)patch_count_trailers(p, TRAILER_REPORTED);
	t[FEAT_N_SUGGESTED] = (float)patch_count_trailers(p, TRAILER_SUGGESTED);
	t[FEAT_N_SIGNOFF] = (float)patch_count_trailers(p, TRAILER_SIGNED_OFF);
	for (i = 0; i < p->ntrailers; i++) {
		const struct trailer *tr = &p->trailers[i];

		if (tr->kind == TRAILER_REPORTED && tr->value &&
		    any_word(tr->value, bot_words))
			bot = 1;
		fixes |= tr->kind == TRAILER_FIXES;
		stable |= tr->kind == TRAILER_CC && tr->is_stable;
	}
	/* the same facts when they sit in the body (DPDK's layout) */
	if (strcasestr(msg, "coverity issue:") || strcasestr(msg, "syzbot"))
		bot = 1;
	if (!strncasecmp(msg, "fixes:", 6) || strcasestr(msg, "\nfixes:"))
		fixes = 1;
	if (strcasestr(msg, "cc: stable@"))
		stable = 1;
	t[FEAT_BOT_REPORT] = (float)bot;
	t[FEAT_HAS_FIXES] = (float)fixes;
	t[FEAT_CC_STABLE] = (float)stable;
	t[FEAT_TESTED_CLAIM] = (float)any_word(msg, tested_words);
	t[FEAT_BUGZILLA] = strcasestr(msg, "bugzilla") ||
			   strcasestr(msg, "bugs.dpdk.org") ||
			   strcasestr(msg, "bugzilla.kernel.org");
	t[FEAT_REVERT] = strcasestr(msg, "this reverts commit") != NULL ||
			 !strncmp(p->subject.clean ? p->subject.clean : "",
				  "Revert \"", 8);
}
