/*
 * cmd_score.c - `patchtriage score`: p(fix) and p(bug) of one patch (a
 * mail, stdin, or a commit), the model versions, and the five strongest
 * reasons for each, as text or --json.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "cmds.h"
#include "cmd_scorer.h"

#define NREASONS 5

static const char *const labels[SCORER_NTASKS] = { "p(fix)", "p(bug)" };
static const char *const keys[SCORER_NTASKS] = { "fix", "risk" };

static int print_json(const struct scorer *s)
{
	json_t *j = json_object(), *models = json_object(),
	       *reasons = json_object();
	size_t t, i;
	char *text;

	for (t = 0; t < SCORER_NTASKS; t++) {
		json_t *list;
		size_t shown = 0;

		if (!s->model[t])
			continue;
		json_object_set_new(j, t ? "p_bug" : "p_fix",
				    json_real(s->p[t]));
		json_object_set_new(models, keys[t],
				    json_string(model_version(s->model[t])));
		list = json_array();
		for (i = 0; i < s->nwhy[t] && shown < NREASONS; i++) {
			const struct explain_reason *r = &s->why[t][i];

			if (r->is_text || r->weight == 0)
				continue;
			json_array_append_new(
				list, json_pack("{s:s, s:s, s:f}", "reason",
						r->text, "feature", r->feature,
						"weight", r->weight));
			shown++;
		}
		json_object_set_new(reasons, keys[t], list);
	}
	json_object_set_new(j, "models", models);
	json_object_set_new(j, "reasons", reasons);
	json_object_set_new(j, "history", json_boolean(s->have_history));
	text = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(6));
	json_decref(j);
	if (!text)
		return cli_fail("out of memory");
	puts(text);
	free(text);
	return EXIT_OK;
}

int cmd_score(int argc, char **argv, struct cli_ctx *ctx)
{
	struct scorer s;
	struct buf out = BUF_INIT;
	size_t t;
	int json, rc;

	if (cli_wants_help(argc, argv, "score"))
		return EXIT_OK;
	rc = scorer_run(&s, &json, argc, argv, ctx, "score");
	if (rc)
		return rc;
	if (json) {
		rc = print_json(&s);
		scorer_free(&s);
		return rc;
	}
	for (t = 0; t < SCORER_NTASKS; t++) {
		if (!s.model[t])
			continue;
		buf_addf(&out, "%s %.3f  (model %s)\n", labels[t], s.p[t],
			 model_version(s.model[t]));
		explain_format(&out, s.why[t], s.nwhy[t], NREASONS, 0);
	}
	fputs(out.ptr, stdout);
	buf_free(&out);
	scorer_free(&s);
	return EXIT_OK;
}
