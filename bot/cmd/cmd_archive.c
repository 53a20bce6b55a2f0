/*
 * cmd_archive.c - `patchtriage archive import|stats`: read list archives
 * (public-inbox epochs, mbox files) into the state database through the
 * threading of scoring/lists/thread.c (scoring/lists/archive.c), recompute outcomes
 * and list labels (scoring/lists/outcome.c), and print what is stored.  The
 * sentiment word list comes from mail.sentiment-file, as for IMAP (the
 * built-in conf/sentiment.txt without it).
 * Progress on a terminal (progress.c): an mbox's ETA is by its bytes.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scoring/history/maintainers.h"
#include "scoring/lists/archive.h"
#include "scoring/model/listfeat.h"
#include "bot/cmd/cli.h"
#include "bot/cmd/cmds.h"
#include "bot/cmd/opt.h"
#include "bot/cmd/progress.h"

struct archive_show {
	struct progress line;
	char stage[80];
	char note[48];
};

static void show_progress(const struct archive_progress *p, void *ctx)
{
	struct archive_show *pr = ctx;
	struct pt_progress_report r = { pr->stage,	    "messages",
					p->source_messages, 0,
					p->share,	    NULL };
	const char *name;

	name = p->source ? strrchr(p->source, '/') : NULL;
	name = name ? name + 1 : p->source ? p->source : "";
	snprintf(pr->stage, sizeof(pr->stage), "importing %s", name);
	if (p->skipped) {
		snprintf(pr->note, sizeof(pr->note), "%zu skipped", p->skipped);
		r.note = pr->note;
	}
	progress_show(&pr->line, &r);
}

static void print_result(const struct archive_result *r)
{
	printf("read %zu messages from %zu sources: %zu new, %zu already "
	       "stored, %zu skipped\n",
	       r->messages, r->sources, r->imported, r->duplicates, r->skipped);
	printf("new:     %zu patches, %zu cover letters, %zu replies, %zu "
	       "other\n",
	       r->patches, r->covers, r->replies, r->other);
	if (r->absent)
		printf("absent: %zu messages not in the repository (a "
		       "partial snapshot lacks their blobs), skipped; "
		       "see archive_skips\n",
		       r->absent);
	if (r->deleted)
		printf("removed: %zu messages deleted from the archive\n",
		       r->deleted);
}

/*
 * A file that ended early is an error of its own (what was read stays
 * stored): 1 after saying so, naming the file as the user gave it.
 */
static int say_cut(const struct archive *a, const char *path,
		   struct progress *line)
{
	size_t nread;

	if (!archive_source_cut(a, &nread))
		return 0;
	progress_end(line); /* the error starts on a clean line */
	cli_fail("archive import: '%s': compressed stream ends early "
		 "(message %zu and after not read)",
		 path, nread + 1);
	return 1;
}

/* --maintainers FILE: its M: people may say "applied" with authority. */
static int set_maintainers(struct archive *a, const char *path)
{
	struct buf text = BUF_INIT;
	struct maint *m = NULL;
	int rc;

	rc = pt_read_file(&text, path, 64u << 20);
	if (!rc)
		rc = maint_parse(&m, text.ptr ? text.ptr : "", text.len, NULL,
				 NULL);
	if (rc)
		rc = pt_error_wrap(rc, "archive import: --maintainers '%s'",
				   path);
	if (!rc && !m->n)
		rc = pt_error_set(PT_EINVAL,
				  "archive import: --maintainers '%s': no "
				  "MAINTAINERS section in it",
				  path);
	if (!rc)
		rc = archive_set_maintainers(a, m, path);
	maint_free(m);
	buf_free(&text);
	return rc;
}

static int run_import(struct cli_ctx *ctx, int pi, const char **paths, int n,
		      int full, const char *maintainers)
{
	struct archive_opts o;
	struct archive_result r;
	struct archive *a = NULL;
	struct archive_show pr;
	struct config *cfg;
	struct db *db;
	char *lex = NULL, **epochs = NULL, **e;
	int i, rc, cut = 0;

	memset(&o, 0, sizeof(o));
	rc = cli_config(ctx, &cfg);
	if (!rc)
		rc = cli_db(ctx, &db);
	if (!rc)
		rc = config_get_string(cfg, "mail.sentiment-file", NULL, &lex);
	if (rc)
		return cli_fail_last();
	memset(&pr, 0, sizeof(pr));
	progress_init(&pr.line, ctx);
	o.lexicon = lex;
	o.full = full;
	o.progress = show_progress;
	o.progress_ctx = &pr;
	o.finish_progress = progress_cb(&pr.line);
	rc = archive_open(&a, db, &o);
	if (!rc && maintainers)
		rc = set_maintainers(a, maintainers);
	for (i = 0; !rc && i < n; i++) {
		if (!pi) {
			rc = archive_import_mbox(a, paths[i]);
			if (!rc)
				cut += say_cut(a, paths[i], &pr.line);
			continue;
		}
		rc = archive_pi_epochs(&epochs, paths[i]);
		for (e = epochs; !rc && e && *e; e++)
			rc = archive_import_pi(a, *e);
		archive_paths_free(epochs);
		epochs = NULL;
	}
	if (!rc)
		rc = archive_finish(a, &r);
	progress_end(&pr.line);
	if (rc) {
		rc = cli_fail_last();
	} else {
		if (!ctx->quiet)
			print_result(&r);
		rc = cut ? EXIT_FAIL : EXIT_OK;
	}
	archive_free(a);
	free(lex);
	return rc;
}

static int cmd_import(int argc, char **argv, struct cli_ctx *ctx)
{
	const char **paths, *maintainers = NULL;
	size_t n = 0;
	int pi = -1, public_inbox = 0, mbox = 0, full = 0, rc;
	const struct opt opts[] = {
		OPTION_FLAG(0, "public-inbox", &public_inbox),
		OPTION_FLAG(0, "mbox", &mbox),
		OPTION_FLAG(0, "full", &full),
		OPTION_STRING(0, "maintainers", &maintainers),
		OPTION_FLAG('q', "quiet", &ctx->quiet),
		OPTION_END,
	};

	paths = calloc((size_t)argc, sizeof(*paths));
	if (!paths)
		return cli_fail("out of memory");
	rc = opt_parse("archive", opts, argc, argv, paths, (size_t)argc, &n);
	if (!rc && public_inbox && mbox)
		rc = cli_usage("archive", "give either --public-inbox or "
					  "--mbox");
	if (!rc)
		pi = public_inbox ? 1 : mbox ? 0 : -1;
	if (!rc && (pi < 0 || !n))
		rc = cli_usage("archive", "import needs --public-inbox "
					  "GITDIR... or --mbox FILE...");
	if (!rc)
		rc = run_import(ctx, pi, paths, (int)n, full, maintainers);
	free(paths);
	return rc;
}

/*
 * One count a line, its unit in the label ("applied, patches" beside
 * "applied notices, messages"); the --json keys are the field names.
 */
#define STAT(f, label)                                   \
	{                                                \
		label, offsetof(struct archive_stats, f) \
	}
static const struct {
	const char *label;
	size_t off;
} stat_lines[] = {
	STAT(sources, "sources, epochs and mbox files"),
	STAT(messages, "messages"),
	STAT(skipped, "skipped, messages"),
	STAT(series, "series"),
	STAT(series_complete, "complete series"),
	STAT(versions_linked, "series linked to an earlier version"),
	STAT(patches, "patches"),
	STAT(replies, "replies, messages"),
	STAT(reviews, "review trailers given on the list"),
	STAT(notices, "applied notices, messages"),
	STAT(applied, "applied, patches"),
	STAT(applied_reply, "applied by a maintainer's reply, patches"),
	STAT(applied_bot, "applied by a patchwork-bot notice, patches"),
	STAT(applied_commit, "applied as a mined commit, patches"),
	STAT(superseded, "superseded, patches"),
	STAT(neither, "neither applied nor superseded, patches"),
	STAT(fixes, "fixes (Fixes: or Cc: stable), patches"),
	STAT(bugs, "bug-introducing, patches"),
	STAT(trivial_only, "named by trivial fixes only, patches"),
};
#undef STAT

static void print_stats(const struct archive_stats *s)
{
	size_t i, w = 0, n;

	for (i = 0; i < sizeof(stat_lines) / sizeof(stat_lines[0]); i++) {
		n = strlen(stat_lines[i].label);
		w = n > w ? n : w;
	}
	for (i = 0; i < sizeof(stat_lines) / sizeof(stat_lines[0]); i++)
		printf("%-*s  %lld\n", (int)w, stat_lines[i].label,
		       (long long)*(const int64_t *)((const char *)s +
						     stat_lines[i].off));
}

/* One line per list and the total: the columns of archive_list_cols. */
static void print_lists(const struct archive_list_stats *rows, size_t n)
{
	const struct archive_list_col *c;
	size_t i, w = 4;

	for (i = 0; i < n; i++)
		w = strlen(rows[i].list) > w ? strlen(rows[i].list) : w;
	printf("\n%-*s", (int)w, "list");
	for (c = archive_list_cols; c->name; c++)
		printf(" %*s", (int)strlen(c->name), c->name);
	putchar('\n');
	for (i = 0; i < n; i++) {
		printf("%-*s", (int)w, rows[i].list);
		for (c = archive_list_cols; c->name; c++)
			printf(" %*lld", (int)strlen(c->name),
			       (long long)*(
				       const int64_t *)((const char *)&rows[i] +
							c->off));
		putchar('\n');
	}
}

/* The stats object with "lists": [...] as its last member. */
static int stats_json(struct buf *b, const struct archive_stats *s,
		      const struct archive_list_stats *rows, size_t n)
{
	int rc = archive_stats_json(b, s);

	if (!rc && b->len && b->ptr[b->len - 1] == '}') {
		buf_truncate(b, b->len - 1);
		rc = buf_addstr(b, ", \"lists\": ");
		if (!rc)
			rc = archive_stats_lists_json(b, rows, n);
		if (!rc)
			rc = buf_addch(b, '}');
	}
	return rc;
}

static int cmd_stats_(int argc, char **argv, struct cli_ctx *ctx)
{
	struct archive_list_stats *rows = NULL;
	struct archive_stats s;
	struct buf b = BUF_INIT;
	struct db *db;
	size_t npos, n = 0;
	int json = 0, rc;
	const struct opt opts[] = {
		OPTION_FLAG(0, "json", &json),
		OPTION_END,
	};

	rc = opt_parse("archive", opts, argc, argv, NULL, 0, &npos);
	if (rc)
		return rc;
	if (cli_db_existing(ctx, &db) || archive_stats(&s, db) ||
	    archive_stats_lists(&rows, &n, db))
		return cli_fail_last();
	if (!json) {
		print_stats(&s);
		print_lists(rows, n);
	} else if (!(rc = stats_json(&b, &s, rows, n))) {
		puts(b.ptr);
	}
	buf_free(&b);
	archive_stats_lists_free(rows, n);
	return rc ? cli_fail_last() : EXIT_OK;
}

static int print_row(const struct listfeat_row *r, void *ctx)
{
	int i;

	(void)ctx;
	printf("{\"patch_id\": %lld, \"message_id\": \"",
	       (long long)r->patch_id);
	for (i = 0; r->message_id && r->message_id[i]; i++)
		if (r->message_id[i] == '"' || r->message_id[i] == '\\')
			printf("\\%c", r->message_id[i]);
		else if ((unsigned char)r->message_id[i] >= 0x20)
			putchar(r->message_id[i]);
	printf("\", \"date\": %lld, \"outcome\": \"%s\", \"is_fix\": %d, "
	       "\"bug\": %d, \"discovered\": %lld, \"as_of\": %lld",
	       (long long)r->date, r->outcome ? r->outcome : "", r->is_fix,
	       r->bug, (long long)r->discovered, (long long)r->f.as_of);
	for (i = 0; i < LISTFEAT_N; i++) {
		if (r->f.v[i] != r->f.v[i])
			printf(", \"%s\": null", listfeat_name(i));
		else
			printf(", \"%s\": %g", listfeat_name(i), r->f.v[i]);
	}
	puts("}");
	return 0;
}

static int cmd_features(int argc, char **argv, struct cli_ctx *ctx)
{
	enum listfeat_moment m = LISTFEAT_AT_POSTING;
	const char *at = "posting";
	struct db *db;
	size_t npos;
	int rc;
	const struct opt opts[] = {
		OPTION_STRING(0, "at", &at),
		OPTION_END,
	};

	rc = opt_parse("archive", opts, argc, argv, NULL, 0, &npos);
	if (rc)
		return rc;
	if (!strcmp(at, "apply"))
		m = LISTFEAT_AT_APPLY;
	else if (strcmp(at, "posting"))
		return cli_usage("archive", "features takes --at "
					    "posting|apply");
	if (cli_db_existing(ctx, &db) ||
	    listfeat_foreach(db, m, print_row, NULL))
		return cli_fail_last();
	return EXIT_OK;
}

int cmd_archive(int argc, char **argv, struct cli_ctx *ctx)
{
	const struct opt opts[] = { OPTION_END };
	const char *sub = NULL;
	size_t npos;
	int rc;

	/* each subcommand has its options; the rest only knows --help */
	if (argc >= 2 && !strcmp(argv[1], "import"))
		return opt_exit(cmd_import(argc - 1, argv + 1, ctx));
	if (argc >= 2 && !strcmp(argv[1], "stats"))
		return opt_exit(cmd_stats_(argc - 1, argv + 1, ctx));
	if (argc >= 2 && !strcmp(argv[1], "features"))
		return opt_exit(cmd_features(argc - 1, argv + 1, ctx));
	rc = opt_parse("archive", opts, argc, argv, &sub, 1, &npos);
	if (rc)
		return opt_exit(rc);
	if (!sub)
		return cli_usage("archive", "import or stats?");
	return cli_usage("archive", "unknown subcommand '%s'", sub);
}
