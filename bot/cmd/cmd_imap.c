/*
 * cmd_imap.c - `patchtriage imap`: read the configured IMAP folders once
 * (fetch) or keep reading them (watch, IDLE or polling, reconnecting),
 * threading every message into the state database.  One line per message
 * on stdout: "<unix-ms> <folder> <uid> <bytes> <kind> <message-id>".  The
 * daemon (`patchtriage run`) calls the same imap_run() and
 * thread_add_mail().  mail.sentiment-file names the sentiment word list;
 * without it the built-in conf/sentiment.txt scores replies.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "bot/cmd/cli.h"
#include "bot/cmd/opt.h"
#include "bot/sys/daemon.h"
#include "bot/mail/imap.h"
#include "bot/sys/log.h"
#include "scoring/lists/thread.h"

struct imap_cmd {
	struct thread *th;
	int quiet;
};

static long long now_ms(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static int on_message(const char *folder, uint32_t uid, const char *msg,
		      size_t len, void *ctx)
{
	struct imap_cmd *c = ctx;
	struct thread_result r;
	int rc;

	rc = thread_add_mail(c->th, msg, len, folder, &r);
	if (rc) {
		/* a message we cannot parse must not stop the folder */
		log_warn("imap: folder '%s' uid %u: %s; skipped", folder, uid,
			 pt_error_last());
		return 0;
	}
	if (!c->quiet) {
		printf("%lld %s %u %zu %s %s\n", now_ms(), folder, uid, len,
		       r.duplicate ? "duplicate" : thread_kind_name(r.kind),
		       r.message_id ? r.message_id : "-");
		fflush(stdout);
	}
	thread_result_clear(&r);
	return 0;
}

static int parse_args(int argc, char **argv, int *watch, long *run_for)
{
	long long seconds = *run_for;
	const char *sub;
	size_t npos;
	int once = 0, rc;
	const struct opt opts[] = {
		OPTION_FLAG(0, "once", &once),
		OPTION_INT(0, "for", &seconds, 0, LONG_MAX),
		OPTION_END,
	};

	rc = opt_parse("imap", opts, argc, argv, &sub, 1, &npos);
	if (rc)
		return rc;
	if (!npos)
		return cli_usage("imap", "say 'fetch' or 'watch'");
	if (!strcmp(sub, "watch"))
		*watch = 1;
	else if (strcmp(sub, "fetch"))
		return cli_usage("imap", "unknown subcommand '%s'", sub);
	/* --once makes watch a fetch */
	if (once)
		*watch = 0;
	*run_for = (long)seconds;
	return 0;
}

static int run(struct cli_ctx *ctx, int watch, long run_for)
{
	struct imap_cmd c = { NULL, ctx->quiet };
	struct imap_stats st = { 0 };
	struct imap_opts o;
	struct config *cfg;
	struct imap *s = NULL;
	struct db *db;
	char *lex = NULL;
	size_t i;
	int rc;

	rc = cli_config(ctx, &cfg);
	if (!rc)
		rc = cli_db(ctx, &db);
	if (rc)
		return cli_fail_last();
	rc = imap_opts_from_config(&o, cfg);
	if (rc)
		return cli_fail_last();
	log_register_secret(o.password);
	rc = config_get_string(cfg, "mail.sentiment-file", NULL, &lex);
	if (!rc)
		rc = thread_open(&c.th, db, lex);
	/* SIGPIPE off: a server that goes away must be an error, not death */
	daemon_signals_install();
	if (!rc && watch) {
		rc = imap_run(&o, db, on_message, &c, daemon_should_stop,
			      run_for, &st);
	} else if (!rc) {
		rc = imap_connect(&s, &o);
		for (i = 0; !rc && o.folders[i]; i++)
			rc = imap_sync_folder(s, db, o.folders[i], on_message,
					      &c, &st);
		imap_free(s);
	}
	if (!rc && ctx->verbose)
		fprintf(stderr,
			"imap: %zu fetched, %zu skipped, %zu bytes, "
			"%zu resyncs\n",
			st.fetched, st.skipped, st.bytes, st.resyncs);
	thread_free(c.th);
	free(lex);
	imap_opts_clear(&o);
	return rc ? cli_fail_last() : EXIT_OK;
}

int cmd_imap(int argc, char **argv, struct cli_ctx *ctx)
{
	long run_for = 0;
	int watch = 0, rc;

	rc = parse_args(argc, argv, &watch, &run_for);
	if (rc)
		return opt_exit(rc);
	return run(ctx, watch, run_for);
}
