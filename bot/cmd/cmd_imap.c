/*
 * cmd_imap.c - `patchtriage imap`: read the configured IMAP folders once
 * (fetch) or keep reading them (watch, IDLE or polling, reconnecting),
 * threading every message into the state database.  One line per message
 * on stdout: "<unix-ms> <folder> <uid> <bytes> <kind> <message-id>".  The
 * daemon (`patchtriage run`) calls the same imap_run() and
 * thread_add_mail().  mail.sentiment-file names the sentiment word list
 * (conf/sentiment.txt); without it replies get no sentiment score.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "bot/cmd/cli.h"
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
	int i;

	if (argc < 2)
		return cli_usage("imap", "say 'fetch' or 'watch'");
	if (!strcmp(argv[1], "watch"))
		*watch = 1;
	else if (strcmp(argv[1], "fetch"))
		return cli_usage("imap", "unknown subcommand '%s'", argv[1]);
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--once")) {
			*watch = 0;
		} else if (!strcmp(argv[i], "--for") && i + 1 < argc) {
			*run_for = strtol(argv[++i], NULL, 10);
		} else {
			return cli_usage("imap", "unknown option '%s'",
					 argv[i]);
		}
	}
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
		fprintf(stderr, "imap: %zu fetched, %zu skipped, %zu bytes, "
			"%zu resyncs\n", st.fetched, st.skipped, st.bytes,
			st.resyncs);
	thread_free(c.th);
	free(lex);
	imap_opts_clear(&o);
	return rc ? cli_fail_last() : EXIT_OK;
}

int cmd_imap(int argc, char **argv, struct cli_ctx *ctx)
{
	long run_for = 0;
	int watch = 0, rc;

	if (cli_wants_help(argc, argv, "imap"))
		return EXIT_OK;
	rc = parse_args(argc, argv, &watch, &run_for);
	if (rc)
		return rc;
	return run(ctx, watch, run_for);
}
