/*
 * cmd_explain.c - `patchtriage explain`: the full breakdown behind a
 * patch's scores: the base log-odds, every tabular feature's value and
 * contribution, and the strongest words and code tokens of the text
 * model; --json gives the same at full precision, so that a script can
 * check that the contributions and the base add up to the uncalibrated
 * log-odds the model's calibration maps to p.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bot/cmd/cli.h"
#include "bot/cmd/cmds.h"
#include "bot/cmd/cmd_scorer.h"
#include "bot/cmd/opt.h"

static const char *const labels[SCORER_NTASKS] = { "p(fix)", "p(bug)" };
static const char *const keys[SCORER_NTASKS] = { "fix", "risk" };

static json_t *reason_json(const struct explain_reason *r)
{
	json_t *o = json_pack("{s:s, s:f, s:s}", "feature", r->feature,
			      "weight", r->weight, "reason", r->text);

	/* a missing value (NAN) is null: JSON has no NaN */
	json_object_set_new(o, "value",
			    isnan(r->value) ? json_null()
					    : json_real(r->value));
	return o;
}

/*
 * {"fix": {"p", "model", "bias", "features": [every tabular column the
 * model uses; columns that say the same thing are one row, named by the
 * first, their weights summed], "text": [the text model's part: the patch's strongest
 * words and code tokens, then "text.other"]}, "risk": {...}, "history":
 * bool}; bias plus every weight of both lists is the log-odds.
 */
static int print_json(const struct scorer *s)
{
	json_t *j = json_object();
	size_t t, i;

	for (t = 0; t < SCORER_NTASKS; t++) {
		json_t *feats, *toks;

		if (!s->model[t])
			continue;
		feats = json_array();
		toks = json_array();
		for (i = 0; i < s->nwhy[t]; i++)
			json_array_append_new(s->why[t][i].is_text ? toks
								   : feats,
					      reason_json(&s->why[t][i]));
		json_object_set_new(j, keys[t],
				    json_pack("{s:f, s:s, s:f, s:o, s:o}", "p",
					      s->p[t], "model",
					      model_version(s->model[t]),
					      "bias", s->bias[t], "features",
					      feats, "text", toks));
	}
	return scorer_put_json(j, s, 17);
}

static void print_text(struct buf *out, const struct scorer *s)
{
	size_t t, i;

	for (t = 0; t < SCORER_NTASKS; t++) {
		if (!s->model[t])
			continue;
		buf_addf(out,
			 "%s %.3f  (model %s)\n  base log-odds %+.2f\n"
			 "  %-7s %-32s %10s  %s\n",
			 labels[t], s->p[t], model_version(s->model[t]),
			 s->bias[t], "weight", "feature", "value", "reason");
		for (i = 0; i < s->nwhy[t]; i++) {
			const struct explain_reason *r = &s->why[t][i];

			buf_addf(out, "  %+7.3f %-32s %10.4g  %s\n", r->weight,
				 r->feature, r->value, r->text);
		}
		buf_addch(out, '\n');
	}
}

int cmd_explain(int argc, char **argv, struct cli_ctx *ctx)
{
	return scorer_main(argc, argv, ctx, "explain", print_json, print_text);
}
