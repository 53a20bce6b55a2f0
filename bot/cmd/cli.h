/*
 * cli.h - what every command (bot/cmd_*.c) shares: the context built from
 * the global options, the command table's row type, and the helpers that
 * print errors the one way (git's: "error: ...", lowercase, the input in
 * single quotes).  Only the CLI layer prints or exits.
 */
#ifndef PT_CLI_H
#define PT_CLI_H

#include <stdio.h>

#include <jansson.h>

#include "scoring/store/config.h"
#include "scoring/store/db.h"
#include "scoring/util/pt.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

struct cli_ctx {
	const char *argv0;
	char *state_dir;   /* --state, else $XDG_STATE_HOME/patchtriage */
	char *config_file; /* --config, else $PATCHTRIAGE_CONFIG, else
			      $XDG_CONFIG_HOME/patchtriage/config if it exists */
	int quiet;
	int verbose;
	struct config *cfg; /* opened by cli_config() */
	struct db *db;	    /* opened by cli_db() */
};

struct cli_command {
	const char *name;
	int (*fn)(int argc, char **argv, struct cli_ctx *ctx);
	const char *usage;   /* "show [--json] FILE|-" */
	const char *summary; /* one line for --help */
};

extern const struct cli_command cli_commands[];

/* Print "error: <last error>" (or a formatted message) to stderr. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cli_fail_last(void);
int cli_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
struct patch;
/* Warn of each file of a commit whose change could not be read. */
void cli_warn_uncounted(const struct patch *p);
/* Print the command's usage line(s) to f. */
void cli_print_usage(FILE *f, const char *cmd);
/* Print the command's usage line and summary to stdout (its --help). */
void cli_print_help(const char *cmd);

/* Lazily open the configuration and the state database. */
int cli_config(struct cli_ctx *ctx, struct config **out);
int cli_db(struct cli_ctx *ctx, struct db **out);
/*
 * As cli_db, for a command that only reads the state: PT_ENOTFOUND,
 * naming the path, when there is no state database, and nothing created.
 */
int cli_db_existing(struct cli_ctx *ctx, struct db **out);
/* mkdir -p the state directory (mode 0700). */
int cli_state_dir(struct cli_ctx *ctx, const char **out);

int cli_main(int argc, char **argv);

/* --jobs N of the commands that use threads: 1..CLI_MAX_JOBS */
#define CLI_MAX_JOBS 64
/* Without --jobs: the online CPUs, at most 2. */
unsigned cli_default_jobs(void);

/* j on standard output, indented, keys in their order (a --json view). */
void cli_print_json(const json_t *j);

#endif
