/*
 * cmd_stable_out.c - what `patchtriage stable` prints: the aligned table
 * and the --json of the shown candidates, with their tags, what must go
 * to the branch before them and the untagged-backport signals as one
 * line of facts (stable_cmd_add_signals(), which the --mbox mails of
 * cmd_stable.c carry too).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "scoring/model/model.h"
#include "scoring/stable/stable.h"
#include "bot/cmd/cmd_stable_int.h"

static const char *tags_of(const struct stable_commit *sc)
{
	if (sc->cc_stable && sc->has_fixes)
		return "S F";
	if (sc->cc_stable)
		return "S";
	if (sc->has_fixes)
		return "F";
	return "-";
}

/*
 * What must go to the branch first, ids cut to width and joined by sep:
 * the commit before the range that a pending fix needs, then the earlier
 * candidates on the same lines.
 */
int stable_cmd_add_needs(struct buf *b, const struct stable_set *s,
			 const struct stable_commit *sc, int width,
			 const char *sep)
{
	const char *next = "";
	size_t k;
	int rc = 0;

	if (sc->needs[0]) {
		rc = buf_addf(b, "%.*s", width, sc->needs);
		next = sep;
	}
	for (k = 0; !rc && k < sc->ndeps; k++, next = sep)
		rc = buf_addf(b, "%s%.*s", next, width, s->c[sc->deps[k]].id);
	return rc;
}

static void print_deps(struct buf *b, const struct stable_set *s,
		       const struct stable_commit *sc)
{
	if (!sc->ndeps && !sc->needs[0])
		buf_addstr(b, "-");
	else
		stable_cmd_add_needs(b, s, sc, 12, ",");
}

/* What of the build facts an untagged candidate has, as one phrase. */
static int add_build(struct buf *b, const char *sep,
		     const struct stable_commit *sc)
{
	const char *and = "";
	int rc;

	rc = buf_addf(b, "%skeeps the build working:", sep);
	if (!rc && sc->build_comp) {
		rc = buf_addf(b, " a %s component",
			      sc->build_ci ? "CI or packaging" : "build");
		and = ",";
	}
	if (!rc && sc->build_words) {
		rc = buf_addf(b, "%s toolchain words", and);
		and = ",";
	}
	if (!rc && sc->build_files)
		rc = buf_addf(b, "%s only build files", and);
	return rc;
}

/*
 * The untagged-backport signals of a candidate as one line of facts,
 * each with its reason; "" when it has none.  The fix wording and a
 * named commit the branch has rank (stable_hint), then a CI or
 * packaging component or toolchain words (stable_build); a series
 * sibling, the other build facts and a tagged candidate that needs it
 * to apply are shown for the reader only.
 */
int stable_cmd_add_signals(struct buf *b, const struct stable_set *s,
			   const struct stable_commit *sc)
{
	const char *sep = "";
	int rc = 0;

	if (sc->fix_subject && !stable_tier(sc)) {
		rc = buf_addstr(b, "untagged, but the subject says fix");
		sep = "; ";
	}
	if (!rc && sc->has_sibling) {
		rc = buf_addf(b, "%sseries of %zu with tagged %.12s", sep,
			      sc->series_len, s->c[sc->sibling].id);
		sep = "; ";
	}
	if (!rc && sc->cites[0]) {
		rc = buf_addf(b, "%snames %.12s, %s", sep, sc->cites,
			      sc->cites_present ? "which the branch has"
						: "not in the branch");
		sep = "; ";
	}
	if (!rc && !stable_tier(sc) &&
	    (sc->build_comp || sc->build_words || sc->build_files)) {
		rc = add_build(b, sep, sc);
		sep = "; ";
	}
	if (!rc && sc->prereq)
		rc = buf_addf(b,
			      "%stagged %.12s conflicts on the branch "
			      "without it",
			      sep, s->c[sc->prereq_of].id);
	return rc;
}

int stable_cmd_print_table(struct run *r)
{
	const struct stable_set *s = r->set;
	struct buf b = BUF_INIT, d = BUF_INIT;
	size_t i, k, in = 0, dropped = 0;

	for (i = 0; i < s->n; i++) {
		in += s->c[i].match != STABLE_MATCH_NONE;
		dropped += s->c[i].dropped;
	}
	buf_addf(&b,
		 "%s onto %s: %zu commits, %zu already in the branch, "
		 "%zu fix code the branch lacks, %zu candidates, %zu shown "
		 "(tagged, hinted, build, or p(fix) >= %.2f); model %s\n\n",
		 r->o.range, r->o.branch, s->n, in, dropped, r->n, r->shown,
		 r->o.threshold, model_version(r->model));
	buf_addf(&b, "%4s  %6s  %-12s  %-4s  %-7s  %-9s  %-12s  %s\n", "rank",
		 "p(fix)", "commit", "tags", "fixes", "applies", "depends-on",
		 "subject");
	for (i = 0; i < r->shown; i++) {
		const struct stable_commit *sc = &s->c[r->c[i].idx];

		buf_reset(&d);
		print_deps(&d, s, sc);
		buf_addf(&b,
			 "%4zu  %6.3f  %.12s  %-4s  %-7s  %-9s  %-12s  %s\n",
			 i + 1, r->c[i].p, sc->id, tags_of(sc),
			 stable_target_name(sc->target),
			 stable_apply_name(sc->apply), d.ptr, sc->subject);
		for (k = 0; k < r->c[i].nwhy; k++)
			buf_addf(&b, "%*s%s %s\n", 10, "",
				 k ? "    " : "why:", r->c[i].why[k]);
		buf_reset(&d);
		stable_cmd_add_signals(&d, s, sc);
		if (d.len)
			buf_addf(&b, "%*ssignals: %s\n", 10, "", d.ptr);
	}
	fputs(b.ptr, stdout);
	buf_free(&b);
	buf_free(&d);
	return 0;
}

static json_t *cand_json(const struct run *r, size_t i)
{
	const struct stable_commit *sc = &r->set->c[r->c[i].idx];
	json_t *j, *deps = json_array(), *why = json_array(),
		   *targets = json_array(), *sig;
	struct buf b = BUF_INIT;
	size_t k;

	for (k = 0; k < sc->ndeps; k++)
		json_array_append_new(deps,
				      json_string(r->set->c[sc->deps[k]].id));
	for (k = 0; k < r->c[i].nwhy; k++)
		json_array_append_new(why, json_string(r->c[i].why[k]));
	for (k = 0; k < sc->ntargets; k++)
		json_array_append_new(targets, json_string(sc->targets[k]));
	j = json_pack("{s:I, s:s, s:s, s:s, s:i, s:f, s:f, s:b, s:b, s:b, "
		      "s:s, s:o, s:s, s:o, s:s?, s:o, s:i, s:i, s:i}",
		      "rank", (json_int_t)(i + 1), "commit", sc->id, "subject",
		      sc->subject, "author", sc->author, "tier", r->c[i].tier,
		      "p_fix", r->c[i].p, "keyword", r->c[i].keyword,
		      "cc_stable", sc->cc_stable, "fixes", sc->has_fixes,
		      "revert", sc->is_revert, "target",
		      stable_target_name(sc->target), "targets", targets,
		      "applies", stable_apply_name(sc->apply), "depends_on",
		      deps, "needs", sc->needs[0] ? sc->needs : NULL, "reasons",
		      why, "files", (int)sc->nfiles, "added", (int)sc->added,
		      "removed", (int)sc->removed);
	stable_cmd_add_signals(&b, r->set, sc);
	sig = json_pack("{s:b, s:b, s:b, s:s?, s:I, s:s?, s:b, s:b, s:b, s:b, "
			"s:b, s:b, s:s?, s:s}",
			"fix_subject", sc->fix_subject, "hint", r->c[i].hint,
			"build", r->c[i].build, "series_sibling",
			sc->has_sibling ? r->set->c[sc->sibling].id : NULL,
			"series_len", (json_int_t)sc->series_len, "cites",
			sc->cites[0] ? sc->cites : NULL, "cites_in_branch",
			sc->cites_present, "reverts_in_branch",
			sc->is_revert && sc->target == STABLE_TARGET_PRESENT,
			"build_ci", sc->build_ci, "build_component",
			sc->build_comp, "build_words", sc->build_words,
			"build_files", sc->build_files, "prerequisite_of",
			sc->prereq ? r->set->c[sc->prereq_of].id : NULL, "text",
			b.ptr ? b.ptr : "");
	buf_free(&b);
	if (j && sig)
		json_object_set_new(j, "signals", sig);
	else
		json_decref(sig);
	return j;
}

int stable_cmd_print_json(struct run *r)
{
	const struct stable_set *s = r->set;
	json_t *j, *list = json_array();
	size_t i, in = 0, dropped = 0;
	char *text;

	for (i = 0; i < s->n; i++) {
		in += s->c[i].match != STABLE_MATCH_NONE;
		dropped += s->c[i].dropped;
	}
	for (i = 0; i < r->shown; i++)
		json_array_append_new(list, cand_json(r, i));
	j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, "
		      "s:I, s:f, s:o}",
		      "range", r->o.range, "branch", r->o.branch, "version",
		      r->version, "tip", s->tip, "base", s->base, "model",
		      model_version(r->model), "commits", (json_int_t)s->n,
		      "in_branch", (json_int_t)in, "dropped",
		      (json_int_t)dropped, "candidates_total", (json_int_t)r->n,
		      "shown", (json_int_t)r->shown, "threshold",
		      r->o.threshold, "candidates", list);
	text = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
	json_decref(j);
	if (!text)
		return pt_error_set(PT_ENOMEM, "cannot write the json");
	puts(text);
	free(text);
	return 0;
}
