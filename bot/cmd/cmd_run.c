/*
 * cmd_run.c - `patchtriage run`: the bot.  It takes the state
 * directory's lock (one instance per state), installs the signal
 * handlers (SIGTERM drains and stops, SIGHUP reloads the configuration)
 * and runs bot/loop/run.c's loop.  --once makes one pass; --dry-run works on
 * a copy of the state database and prints each check and reply instead
 * of sending it, so that the real state is left as it was.  Logs go to
 * stderr, or syslog with --syslog.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "bot/cmd/cli.h"
#include "bot/cmd/cmds.h"
#include "bot/cmd/opt.h"
#include "bot/cmd/schema.h"
#include "bot/sys/daemon.h"
#include "bot/sys/log.h"
#include "bot/loop/run.h"

struct run_args {
	int once, dry_run, use_syslog;
	long run_for;
};

static int parse_args(int argc, char **argv, struct run_args *a)
{
	long long run_for = 0;
	size_t npos;
	int rc;
	const struct opt opts[] = {
		OPTION_FLAG(0, "once", &a->once),
		OPTION_FLAG(0, "dry-run", &a->dry_run),
		OPTION_FLAG(0, "syslog", &a->use_syslog),
		OPTION_INT(0, "for", &run_for, 1, LONG_MAX),
		OPTION_END,
	};

	memset(a, 0, sizeof(*a));
	rc = opt_parse("run", opts, argc, argv, NULL, 0, &npos);
	a->run_for = (long)run_for;
	return rc;
}

/* Print a dry-run action: checks on one line, replies as mail. */
static void print_action(void *ctx, const char *what, const char *text)
{
	const char *s;

	(void)ctx;
	if (!strcmp(what, "check")) {
		printf("would set check: %s\n", text);
	} else {
		printf("would send reply:\n");
		for (s = text; *s; s++)
			if (*s != '\r')
				putchar(*s);
		printf("-- end of reply --\n");
	}
	fflush(stdout);
}

/* A throw-away copy of the state database for --dry-run. */
static int dry_copy(struct db *db, struct buf *path, struct db **out)
{
	const char *tmp = getenv("TMPDIR");
	sqlite3_stmt *st;
	int fd, rc;

	rc = buf_addf(path, "%s/patchtriage-dry-run.XXXXXX",
		      tmp && *tmp ? tmp : "/tmp");
	if (rc)
		return rc;
	fd = mkstemp(path->ptr);
	if (fd < 0)
		return pt_error_set(PT_EIO, "cannot create '%s': %s", path->ptr,
				    strerror(errno));
	close(fd);
	rc = db_prepare(&st, db, "VACUUM INTO ?");
	if (!rc) {
		sqlite3_bind_text(st, 1, path->ptr, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = db_error(db, "copying the state for --dry-run");
		sqlite3_finalize(st);
	}
	if (!rc)
		rc = db_open(out, path->ptr, &bot_db_owners);
	return rc;
}

static void dry_remove(struct buf *path)
{
	struct buf side = BUF_INIT;

	if (!path->len)
		return;
	unlink(path->ptr);
	if (!buf_addf(&side, "%s-wal", path->ptr))
		unlink(side.ptr);
	buf_reset(&side);
	if (!buf_addf(&side, "%s-shm", path->ptr))
		unlink(side.ptr);
	buf_free(&side);
}

static void print_summary(const struct run_stats *s)
{
	fprintf(stderr,
		"run: %zu events, %zu mails, %zu series scored (%zu patches);"
		" checks: %zu posted, %zu unchanged, %zu already there;"
		" replies: %zu sent, %zu already sent, %zu rate limited,"
		" %zu muted, %zu held, %zu dropped;"
		" failures: %zu checks, %zu replies, %zu work items,"
		" %zu polls; %zu refused authentication\n",
		s->events, s->mails, s->series_scored, s->patches_scored,
		s->act.checks_posted, s->act.checks_unchanged,
		s->act.checks_reconciled, s->act.replies_sent,
		s->act.replies_already, s->act.replies_limited,
		s->act.replies_muted, s->act.replies_held,
		s->act.replies_dropped, s->act.checks_failed,
		s->act.replies_failed, s->work_failed, s->source_errors,
		s->act.auth_failed);
}

static int run_with(struct cli_ctx *ctx, const struct run_args *a,
		    const char *cfg_path, struct db *db, const char *dir)
{
	struct run_opts o = { a->once, a->dry_run, a->run_for, NULL, NULL };
	struct run_stats st;
	struct run *r = NULL;
	int rc;

	if (a->dry_run)
		o.report = print_action;
	rc = run_open(&r, cfg_path, db, dir, &o);
	if (!rc) {
		log_info("patchtriage %s running: state '%s', config '%s'%s",
			 PT_VERSION, dir, cfg_path,
			 a->dry_run ? " (dry run)" : "");
		rc = run_loop(r, NULL);
		run_get_stats(r, &st);
		if (!ctx->quiet)
			print_summary(&st);
	}
	run_free(r);
	return rc;
}

static int run(struct cli_ctx *ctx, const struct run_args *a)
{
	struct daemon_lock *lock = NULL;
	struct buf copy = BUF_INIT;
	struct config *cfg;
	struct db *db = NULL, *dry = NULL;
	const char *dir = NULL;
	int rc;

	rc = cli_config(ctx, &cfg);
	if (!rc && !config_path(cfg))
		rc = pt_error_set(PT_EINVAL, "run needs a configuration file:"
					     " give --config FILE");
	if (!rc)
		rc = cli_state_dir(ctx, &dir);
	if (!rc && !a->dry_run)
		rc = daemon_lock_acquire(&lock, dir);
	if (!rc)
		rc = cli_db(ctx, &db);
	if (!rc && a->dry_run)
		rc = dry_copy(db, &copy, &dry);
	if (!rc)
		rc = daemon_signals_install();
	if (!rc)
		rc = run_with(ctx, a, config_path(cfg), dry ? dry : db, dir);
	if (rc)
		cli_fail_last();
	db_close(dry);
	dry_remove(&copy);
	buf_free(&copy);
	daemon_lock_release(lock);
	return rc ? EXIT_FAIL : EXIT_OK;
}

int cmd_run(int argc, char **argv, struct cli_ctx *ctx)
{
	struct run_args a;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return opt_exit(rc);
	log_setup(a.use_syslog ? LOG_TO_SYSLOG : LOG_TO_STDERR,
		  ctx->verbose ? LOG_LVL_DEBUG
		  : ctx->quiet ? LOG_LVL_WARN
			       : LOG_LVL_INFO);
	return run(ctx, &a);
}
