/*
 * thread_text.c - what the text of one list reply says (see thread.h):
 * new lines, inline comments between quoted lines, tested claims, the
 * sentiment of its words (the word list thread_open() loaded), and which
 * test bot sent it with what verdict.  Pure text: no SQL.
 */
#include "scoring/lists/thread.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scoring/lists/thread_int.h"
#include "scoring/util/strmap.h"

/* ---- text analysis ------------------------------------------------- */

static int line_quoted(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i < n && (s[i] == '>' || s[i] == '|');
}

static int line_blank(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]))
			return 0;
	return 1;
}

/* "On Mon, 1 Jan 2024, Jane wrote:" introduces a quote; not a comment */
static int line_attribution(const char *s, size_t n)
{
	return n > 6 && (!strncmp(s + n - 6, "wrote:", 6) ||
			 (n > 7 && !strncmp(s + n - 7, "wrote: ", 7)));
}

static const char *const tested_phrases[] = {
	"tested on",	     "tested it on",	 "tested this on",
	"tested with",	     "tested it with",	 "tested this with",
	"tested against",    "boot-tested",	 "boot tested",
	"runtime tested",    "runtime-tested",	 "tested-on:",
	"i have tested",     "i've tested",	 "we tested",
	"tested the series", "tested the patch",
};

/* What a tested claim may count: boards, machines and their kind. */
static const char *const scale_units[] = {
	"board",  "machine", "system",	 "device", "platform", "host",
	"server", "soc",     "target",	 "config", "variant",  "box",
	"laptop", "phone",   "computer", NULL,
};

static const char *const number_words[] = {
	"zero", "one",	 "two",	  "three", "four", "five",
	"six",	"seven", "eight", "nine",  "ten",  NULL,
};

static unsigned word_number(const char *w, size_t n)
{
	unsigned i;

	if (n && isdigit((unsigned char)w[0])) {
		unsigned long v = strtoul(w, NULL, 10);

		return v > 100000 ? 100000 : (unsigned)v;
	}
	for (i = 0; number_words[i]; i++)
		if (strlen(number_words[i]) == n &&
		    !strncmp(w, number_words[i], n))
			return i;
	return 0;
}

static int is_unit(const char *w, size_t n)
{
	unsigned i;

	for (i = 0; scale_units[i]; i++) {
		size_t k = strlen(scale_units[i]);

		if (n >= k && n <= k + 2 && !strncmp(w, scale_units[i], k))
			return 1; /* boards, boxes */
	}
	return 0;
}

/*
 * The machines a tested line names: N of "N boards" (digits or one to
 * ten; one word may stand between, "3 different boards"), the largest;
 * 1 when it names none.  low is the line in lower case.
 */
static unsigned claim_scale(const char *low)
{
	const char *w[64];
	size_t len[64], k = 0, i;
	unsigned best = 1, v;

	while (*low && k < 64) {
		while (*low && !isalnum((unsigned char)*low))
			low++;
		w[k] = low;
		while (isalnum((unsigned char)*low))
			low++;
		len[k] = (size_t)(low - w[k]);
		if (len[k])
			k++;
	}
	for (i = 0; i + 1 < k; i++) {
		v = word_number(w[i], len[i]);
		if (v < 2)
			continue;
		if ((is_unit(w[i + 1], len[i + 1]) ||
		     (i + 2 < k && is_unit(w[i + 2], len[i + 2]))) &&
		    v > best)
			best = v;
	}
	return best;
}

/* 0 without a tested claim in the line, else the machines it names. */
static unsigned tested_claim(const char *s, size_t n)
{
	char low[512];
	size_t i;

	if (n >= sizeof(low))
		n = sizeof(low) - 1;
	for (i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)s[i]);
	low[n] = '\0';
	if (strstr(low, "not tested") || strstr(low, "untested") ||
	    strstr(low, "tested-by:"))
		return 0;
	for (i = 0; i < sizeof(tested_phrases) / sizeof(*tested_phrases); i++)
		if (strstr(low, tested_phrases[i]))
			return claim_scale(low);
	return 0;
}

static void score_words(struct thread *t, const char *s, size_t n,
			struct thread_text *o)
{
	struct strmap_entry *e;
	char w[64];
	size_t i = 0, k;

	if (!t || !t->lex.len)
		return;
	while (i < n) {
		while (i < n && !isalpha((unsigned char)s[i]))
			i++;
		for (k = 0; i < n && (isalpha((unsigned char)s[i]) ||
				      s[i] == '\'' || s[i] == '-');
		     i++)
			if (k < sizeof(w) - 1)
				w[k++] = (char)tolower((unsigned char)s[i]);
		while (k && (w[k - 1] == '\'' || w[k - 1] == '-'))
			k--;
		if (!k)
			continue;
		e = strmap_get(&t->lex, w, k);
		if (e) {
			o->sentiment_words++;
			o->sentiment_sum += (double)e->v.i / 1000.0;
		}
	}
}

void thread_analyse_text(struct thread *t, const char *text, size_t len,
			 struct thread_text *o)
{
	size_t i = 0, e;
	unsigned scale;
	int seen_quote = 0, pending = 0;

	memset(o, 0, sizeof(*o));
	while (i < len) {
		const char *s = text + i;
		size_t n;

		for (e = i; e < len && text[e] != '\n'; e++)
			;
		n = e - i;
		if (n && s[n - 1] == '\r')
			n--;
		i = e + 1;
		if (n == 3 && !strncmp(s, "-- ", 3))
			break; /* signature */
		if (line_quoted(s, n)) {
			o->quoted_lines++;
			if (pending)
				o->inline_comments++;
			pending = 0;
			seen_quote = 1;
			continue;
		}
		if (line_blank(s, n) || line_attribution(s, n))
			continue;
		o->new_lines++;
		if (seen_quote)
			pending = 1;
		scale = tested_claim(s, n);
		o->tested_claims += scale > 0;
		if (scale > o->tested_scale)
			o->tested_scale = scale;
		score_words(t, s, n, o);
	}
}

/* ---- test bots ----------------------------------------------------- */

static const char *find_ci(const char *hay, const char *needle)
{
	return hay ? strcasestr(hay, needle) : NULL;
}

/* Architectures named by "config: ARCH-..." / "arch: ARCH" lines. */
static void bot_archs(const char *text, const char *key, char *out, size_t cap)
{
	const char *p = text;
	size_t used = 0, n;
	char arch[32];

	out[0] = '\0';
	while (p && (p = strcasestr(p, key))) {
		p += strlen(key);
		while (*p == ' ' || *p == '\t')
			p++;
		for (n = 0; n < sizeof(arch) - 1 &&
			    (isalnum((unsigned char)p[n]) || p[n] == '_');
		     n++)
			arch[n] = p[n];
		arch[n] = '\0';
		if (!n || strstr(out, arch))
			continue;
		if (used + n + 2 > cap)
			break;
		used += (size_t)snprintf(out + used, cap - used, "%s%s",
					 used ? " " : "", arch);
	}
}

void thread_detect_bot(const struct patch *p, const char *text,
		       struct thread_bot *o)
{
	const char *email = p->author.email ? p->author.email : "";
	const char *name = p->author.name ? p->author.name : "";
	const char *subj = p->subject.raw ? p->subject.raw : "";

	memset(o, 0, sizeof(*o));
	if (!strcmp(email, "lkp@intel.com") ||
	    find_ci(name, "kernel test robot")) {
		o->name = "0day";
		if (find_ci(text, "BUILD SUCCESS"))
			o->verdict = "success";
		else if (find_ci(text, "error:") || find_ci(subj, "error"))
			o->verdict = "error";
		else if (find_ci(text, "warning:") || find_ci(subj, "warning"))
			o->verdict = "warning";
		else if (find_ci(text, "regression"))
			o->verdict = "failure";
		else
			o->verdict = "report";
		bot_archs(text, "config:", o->arch, sizeof(o->arch));
	} else if (strstr(email, "kernelci")) {
		o->name = "kernelci";
		o->verdict = find_ci(text, "fail") ||
					     find_ci(subj, "regression")
				     ? "failure"
				     : "report";
		bot_archs(text, "arch:", o->arch, sizeof(o->arch));
	} else if (!strncmp(email, "syzbot", 6) && strstr(email, "syzkaller")) {
		o->name = "syzbot";
		o->verdict = find_ci(text, "did not trigger any issue")
				     ? "success"
				     : "failure";
		bot_archs(text, "arch:", o->arch, sizeof(o->arch));
	} else if (!strncmp(email, "patchwork-bot", 13)) {
		o->name = "patchwork-bot";
		o->verdict = find_ci(text, "was applied to") ||
					     find_ci(text, "were applied to")
				     ? "applied"
				     : "report";
	}
}
