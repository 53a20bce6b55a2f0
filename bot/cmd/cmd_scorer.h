/*
 * cmd_scorer.h - the CLI helper (it prints errors, so it is a cmd_
 * file) that `score` and `explain` share: reading the patch the user
 * names (a mail file, stdin, or --commit REV --repo DIR) and scoring it
 * through scoring/model/verdict.h, the path the daemon scores with: the
 * patch's thread in the state database, the reviews given on the list,
 * the models, and the check descriptions the daemon posts.
 */
#ifndef PT_CMD_SCORER_H
#define PT_CMD_SCORER_H

#include "scoring/model/explain.h"
#include "scoring/model/features.h"
#include "scoring/model/model.h"
#include "scoring/model/triage.h"
#include "scoring/model/verdict.h"
#include "scoring/patch/patch.h"
#include "bot/cmd/cli.h"

#define SCORER_NTASKS 2

struct scorer {
	struct triage *tri;
	struct verdict v;
	struct verdict_lists lists; /* on the state database */
	/* the Patchwork check description of each task, as the daemon
	   posts it; NULL when it posts none for this patch */
	char *check[SCORER_NTASKS];
	/* views into tri and v.res, by task (fix, risk) */
	/* the model that scored each task (the archive model's risk for
	   list mail the lists know); NULL when none did */
	const struct pt_model *model[SCORER_NTASKS];
	struct patch *patch;
	double p[SCORER_NTASKS];
	const struct explain_reason *why[SCORER_NTASKS];
	size_t nwhy[SCORER_NTASKS];
	double bias[SCORER_NTASKS];
	int have_history;
	unsigned nparents; /* of a commit; 0 for a mail */
};

/* The model directory of a task under the state directory. */
int scorer_model_dir(struct buf *out, struct cli_ctx *ctx, const char *task);

/*
 * Parse `[--json] [--repo DIR] [--commit REV] FILE|-` style arguments,
 * load models, read the patch, look its thread up, compute features,
 * predict, explain and describe the checks.
 * *json is set from --json.  Returns EXIT_OK with s filled, OPT_HELP
 * after printing the usage (opt_exit() gives the exit code), or another
 * EXIT_* code after printing the error.
 */
int scorer_run(struct scorer *s, int *json, int argc, char **argv,
	       struct cli_ctx *ctx, const char *cmd);
void scorer_free(struct scorer *s);

/*
 * Add "check" to j: {"fix": DESC, "risk": DESC}, for each task with a
 * model the check description the daemon posts (null when it posts
 * none for this patch); then "history", "merge" ({"parents": N,
 * "against": FIRST-PARENT} for a merge commit, else null) and
 * "uncounted" (the paths p->uncounted names); print it on one line with that many significant
 * digits for reals, and release it.  Returns an EXIT_* code.
 */
struct json_t;
int scorer_put_json(struct json_t *j, const struct scorer *s, int digits);

/*
 * The whole of `score` and `explain`: scorer_run(), then json(s) with
 * --json or else text(out, s) printed to stdout.  Returns the exit code.
 */
int scorer_main(int argc, char **argv, struct cli_ctx *ctx, const char *cmd,
		int (*json)(const struct scorer *s),
		void (*text)(struct buf *out, const struct scorer *s));

#endif
