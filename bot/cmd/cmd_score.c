/*
 * cmd_score.c - `patchtriage score`: p(fix) and p(bug) of one patch (a
 * mail, stdin, or a commit), the model versions, and the five strongest
 * reasons for each, as text or --json.  The reasons are the features
 * with the largest contributions; when fewer than five contribute (a
 * tree model that leans on the text score alone) the strongest words
 * and code tokens of the text model fill the list, marked as text.
 * Then the check description the daemon posts on Patchwork for the
 * patch (the same text, byte for byte: see scoring/model/verdict.h).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/cmd/cli.h"
#include "bot/cmd/cmds.h"
#include "bot/cmd/cmd_scorer.h"
#include "bot/cmd/opt.h"

#define NREASONS 5

static const char *const labels[SCORER_NTASKS] = { "p(fix)", "p(bug)" };
static const char *const keys[SCORER_NTASKS] = { "fix", "risk" };

/* The indices into s->why[t] of the reasons shown (explain_pick()). */
static size_t pick_reasons(size_t *idx, const struct scorer *s, size_t t)
{
	return explain_pick(idx, NREASONS, s->why[t], s->nwhy[t], 0);
}

static int print_json(const struct scorer *s)
{
	json_t *j = json_object(), *models = json_object(),
	       *reasons = json_object();
	size_t t, i;

	for (t = 0; t < SCORER_NTASKS; t++) {
		json_t *list;
		size_t idx[NREASONS], n;

		if (!s->model[t])
			continue;
		json_object_set_new(j, t ? "p_bug" : "p_fix",
				    json_real(s->p[t]));
		json_object_set_new(models, keys[t],
				    json_string(model_version(s->model[t])));
		list = json_array();
		n = pick_reasons(idx, s, t);
		for (i = 0; i < n; i++) {
			const struct explain_reason *r = &s->why[t][idx[i]];

			json_array_append_new(list,
					      json_pack("{s:s, s:s, s:f, s:b}",
							"reason", r->text,
							"feature", r->feature,
							"weight", r->weight,
							"text", r->is_text));
		}
		json_object_set_new(reasons, keys[t], list);
	}
	json_object_set_new(j, "models", models);
	json_object_set_new(j, "reasons", reasons);
	return scorer_put_json(j, s, 6);
}

static void print_text(struct buf *out, const struct scorer *s)
{
	size_t t, i, n, idx[NREASONS];

	for (t = 0; t < SCORER_NTASKS; t++) {
		if (!s->model[t])
			continue;
		buf_addf(out, "%s %.3f  (model %s)\n", labels[t], s->p[t],
			 model_version(s->model[t]));
		n = pick_reasons(idx, s, t);
		for (i = 0; i < n; i++) {
			const struct explain_reason *r = &s->why[t][idx[i]];

			buf_addf(out, "  %+6.2f  %s\n", r->weight, r->text);
		}
		if (s->check[t])
			buf_addf(out, "  check: %s\n", s->check[t]);
	}
}

int cmd_score(int argc, char **argv, struct cli_ctx *ctx)
{
	return scorer_main(argc, argv, ctx, "score", print_json, print_text);
}
