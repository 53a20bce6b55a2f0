/*
 * labels_conf.c - the trivial-fix rules of labels.c (labels.h): the word
 * lists of conf/labels.conf with their built-in defaults, and the tests
 * of a path (documentation) and of a fixing commit's text (spelling, a
 * qualified race) against them.
 */
#include "scoring/history/labels.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "scoring/store/config.h"

#define RACE_WINDOW 40 /* bytes between a qualifier and the race word */

struct wlist {
	char **v;
	size_t n;
};

struct labels_conf {
	struct wlist doc_dir, doc_suffix, spell, qual, race, unless;
};

static const char *const def_doc_dir[] = { "doc/", "docs/", "Documentation/",
					   NULL };
static const char *const def_doc_suffix[] = { ".rst", ".md", ".html", ".svg",
					      NULL };
static const char *const def_spell[] = { "spelling",  "misspel",
					 "typo",      "kernel-doc",
					 "kerneldoc", "checkpatch",
					 "grammar",   NULL };
static const char *const def_qual[] = { "theoretical", "theoretically",
					"potential",   "potentially",
					"possible",    "possibly",
					NULL };
static const char *const def_race[] = { "race", "racy", "data race", NULL };
static const char *const def_unless[] = {
	"crash",    "hang",   "corrupt",  "leak",	    "panic", "oops",
	"deadlock", "lockup", "segfault", "use-after-free", NULL,
};

static const char *const rule_names[LABELS_NRULES] = { "nocode", "spelling",
						       "race" };

const char *labels_rule_name(enum labels_rule r)
{
	return (unsigned)r < LABELS_NRULES ? rule_names[r] : "?";
}

static void wlist_free(struct wlist *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
	w->v = NULL;
	w->n = 0;
}

static int wlist_set(struct wlist *w, const char *const *src)
{
	size_t n = 0;

	while (src[n])
		n++;
	w->v = pt_calloc(n + 1, sizeof(*w->v));
	if (!w->v)
		return PT_ENOMEM;
	for (w->n = 0; w->n < n; w->n++) {
		w->v[w->n] = pt_strdup(src[w->n]);
		if (!w->v[w->n])
			return PT_ENOMEM;
	}
	return 0;
}

void labels_conf_free(struct labels_conf *c)
{
	if (!c)
		return;
	wlist_free(&c->doc_dir);
	wlist_free(&c->doc_suffix);
	wlist_free(&c->spell);
	wlist_free(&c->qual);
	wlist_free(&c->race);
	wlist_free(&c->unless);
	free(c);
}

static int wlist_load(struct wlist *w, struct config *cfg, const char *key)
{
	char **v;
	int rc;

	rc = config_get_all(cfg, key, &v);
	if (rc)
		return rc;
	rc = wlist_set(w, (const char *const *)v);
	config_strv_free(v);
	return rc;
}

static int load_file(struct labels_conf *c, const char *path)
{
	struct config *cfg = NULL;
	int rc;

	if (access(path, R_OK))
		return pt_error_set(PT_ENOTFOUND,
				    "cannot read labels "
				    "configuration '%s'",
				    path);
	rc = config_open(&cfg, path);
	if (!rc)
		rc = wlist_load(&c->doc_dir, cfg, "trivial.nocode.doc-dir");
	if (!rc)
		rc = wlist_load(&c->doc_suffix, cfg,
				"trivial.nocode.doc-suffix");
	if (!rc)
		rc = wlist_load(&c->spell, cfg, "trivial.spelling.word");
	if (!rc)
		rc = wlist_load(&c->qual, cfg, "trivial.race.qualifier");
	if (!rc)
		rc = wlist_load(&c->race, cfg, "trivial.race.word");
	if (!rc)
		rc = wlist_load(&c->unless, cfg, "trivial.race.unless");
	config_free(cfg);
	return rc;
}

int labels_conf_load(struct labels_conf **out, const char *path)
{
	struct labels_conf *c;
	int rc;

	*out = NULL;
	c = pt_calloc(1, sizeof(*c));
	if (!c)
		return PT_ENOMEM;
	if (path) {
		rc = load_file(c, path);
	} else {
		rc = wlist_set(&c->doc_dir, def_doc_dir);
		if (!rc)
			rc = wlist_set(&c->doc_suffix, def_doc_suffix);
		if (!rc)
			rc = wlist_set(&c->spell, def_spell);
		if (!rc)
			rc = wlist_set(&c->qual, def_qual);
		if (!rc)
			rc = wlist_set(&c->race, def_race);
		if (!rc)
			rc = wlist_set(&c->unless, def_unless);
	}
	if (rc) {
		labels_conf_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

static int wlist_equal(const struct wlist *a, const struct wlist *b)
{
	size_t i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]))
			return 0;
	return 1;
}

int labels_conf_equal(const struct labels_conf *a, const struct labels_conf *b)
{
	return wlist_equal(&a->doc_dir, &b->doc_dir) &&
	       wlist_equal(&a->doc_suffix, &b->doc_suffix) &&
	       wlist_equal(&a->spell, &b->spell) &&
	       wlist_equal(&a->qual, &b->qual) &&
	       wlist_equal(&a->race, &b->race) &&
	       wlist_equal(&a->unless, &b->unless);
}

int labels_doc_path(const struct labels_conf *c, const char *path)
{
	size_t i, n = strlen(path);

	for (i = 0; i < c->doc_dir.n; i++) {
		const char *d = c->doc_dir.v[i];
		size_t dl = strlen(d);

		if (!strncmp(path, d, dl))
			return 1;
	}
	for (i = 0; i < c->doc_suffix.n; i++) {
		size_t sl = strlen(c->doc_suffix.v[i]);

		if (n >= sl && !strcmp(path + n - sl, c->doc_suffix.v[i]))
			return 1;
	}
	return 0;
}

/* Next position >= from where WORD starts a word in TEXT, or -1. */
static long find_word(const char *text, size_t len, size_t from,
		      const char *word)
{
	size_t wl = strlen(word), i;

	if (!wl || wl > len)
		return -1;
	for (i = from; i + wl <= len; i++) {
		if (i && isalnum((unsigned char)text[i - 1]))
			continue;
		if (!strncasecmp(text + i, word, wl))
			return (long)i;
	}
	return -1;
}

static int any_word(const struct wlist *w, const char *text, size_t len)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (find_word(text, len, 0, w->v[i]) >= 0)
			return 1;
	return 0;
}

/* A qualifier that ends at most RACE_WINDOW bytes before position at. */
static int qualified(const struct labels_conf *c, const char *text, size_t len,
		     size_t at)
{
	size_t from = at > RACE_WINDOW + 32 ? at - RACE_WINDOW - 32 : 0, i;

	for (i = 0; i < c->qual.n; i++) {
		size_t ql = strlen(c->qual.v[i]);
		long q = (long)from - 1;

		while ((q = find_word(text, at, (size_t)(q + 1),
				      c->qual.v[i])) >= 0)
			if ((size_t)q + ql + RACE_WINDOW >= at)
				return 1;
	}
	(void)len;
	return 0;
}

static int race_rule(const struct labels_conf *c, const char *text, size_t len)
{
	size_t i;

	if (any_word(&c->unless, text, len))
		return 0;
	for (i = 0; i < c->race.n; i++) {
		long at = -1;

		while ((at = find_word(text, len, (size_t)(at + 1),
				       c->race.v[i])) >= 0)
			if (qualified(c, text, len, (size_t)at))
				return 1;
	}
	return 0;
}

int labels_word_rule(const struct labels_conf *c, const char *text, size_t len)
{
	if (any_word(&c->spell, text, len))
		return LABELS_SPELLING;
	if (race_rule(c, text, len))
		return LABELS_RACE;
	return -1;
}
