/*
 * cmd_show.c - `patchtriage show`: parse a mail, an mbox, stdin or a git
 * commit into struct patch and print it, one JSON object a line with
 * --json (patch_to_json, docs/patch-json.md) or a short aligned summary
 * for people.  A message that does not parse is reported, git style, and
 * the others are still shown; the exit code is then 1.  The input is
 * read as a stream, one message at a time, so an mbox of any size is
 * shown in the memory of its largest message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <git2.h>

#include "scoring/lists/archive.h"
#include "scoring/patch/patch.h"
#include "scoring/patch/trailer.h"
#include "bot/cmd/cli.h"
#include "bot/cmd/cmds.h"
#include "bot/cmd/opt.h"

struct show {
	const char *name; /* the input, for messages */
	int json;
	int failed;
	int nmsg;
	size_t index; /* of the message being shown, from 1 */
};

static void print_date(int64_t t, int tz)
{
	time_t local = (time_t)(t + (int64_t)tz * 60);
	struct tm tm;
	char s[32];
	int a = tz < 0 ? -tz : tz;

	if (!t || !gmtime_r(&local, &tm) ||
	    !strftime(s, sizeof(s), "%Y-%m-%d %H:%M:%S", &tm)) {
		printf("-\n");
		return;
	}
	printf("%s %c%02d%02d\n", s, tz < 0 ? '-' : '+', a / 60, a % 60);
}

static void print_person(const char *label, const struct person *p)
{
	printf("  %-9s ", label);
	if (p->name)
		printf("%s", p->name);
	if (p->email)
		printf("%s<%s>", p->name ? " " : "", p->email);
	if (!p->name && !p->email)
		printf("-");
	printf("\n");
}

static void print_version(const struct subject *s)
{
	printf("  %-9s v%u", "version", s->version);
	if (s->total)
		printf(", %s %u/%u", s->is_cover ? "cover" : "patch", s->number,
		       s->total);
	if (s->is_rfc)
		printf(", RFC");
	if (s->is_resend)
		printf(", RESEND");
	printf("\n");
}

static void print_trailers(const struct patch *p)
{
	size_t k, n, stable = 0, i;
	const char *sep = "";

	printf("  %-9s ", "trailers");
	if (!p->ntrailers)
		printf("none");
	for (k = 0; k < TRAILER_NKINDS; k++) {
		n = patch_count_trailers(p, (enum trailer_kind)k);
		if (n) {
			printf("%s%zu %s", sep, n,
			       trailer_kind_json((enum trailer_kind)k));
			sep = ", ";
		}
	}
	for (i = 0; i < p->ntrailers; i++)
		stable += p->trailers[i].is_stable;
	if (stable)
		printf(" (%zu stable)", stable);
	printf("\n");
}

static const char *file_name(const struct patch_file *f)
{
	return f->new_path ? f->new_path : f->old_path ? f->old_path : "?";
}

static void print_files(const struct patch *p)
{
	static const char *const st[] = { "", " (new)", " (deleted)",
					  " (renamed)", " (copied)" };
	size_t i, w = 0, n;

	printf("  %-9s %zu file%s, +%u -%u\n", "files", p->nfiles,
	       p->nfiles == 1 ? "" : "s", p->added, p->removed);
	for (i = 0; i < p->nfiles; i++) {
		n = strlen(file_name(&p->files[i]));
		if (n > w)
			w = n;
	}
	for (i = 0; i < p->nfiles; i++) {
		const struct patch_file *f = &p->files[i];

		printf("  %-9s %-*s  +%u -%u%s", "", (int)w, file_name(f),
		       f->added, f->removed,
		       (unsigned)f->status <= PATCH_FILE_COPIED ? st[f->status]
								: "");
		if (f->old_path && f->new_path &&
		    strcmp(f->old_path, f->new_path))
			printf(" from %s", f->old_path);
		if (f->binary)
			printf(" (binary)");
		if (f->old_mode && f->new_mode && f->old_mode != f->new_mode)
			printf(" (mode %o -> %o)", f->old_mode, f->new_mode);
		printf("\n");
	}
}

static void print_human(const struct patch *p, int first)
{
	if (!first)
		printf("\n");
	printf("%s\n", p->subject.raw && *p->subject.raw ? p->subject.raw
							 : "(no subject)");
	if (p->commit_id)
		printf("  %-9s %s\n", "commit", p->commit_id);
	if (p->message_id)
		printf("  %-9s <%s>\n", "id", p->message_id);
	print_version(&p->subject);
	print_person("author", &p->author);
	printf("  %-9s ", "date");
	print_date(p->author_date, p->author_tz);
	print_trailers(p);
	print_files(p);
}

static int show_patch(struct show *s, const struct patch *p)
{
	struct buf b = BUF_INIT;
	int rc;

	if (!s->json) {
		print_human(p, s->nmsg++ == 0);
		return 0;
	}
	s->nmsg++;
	rc = patch_to_json(&b, p);
	if (!rc)
		printf("%s\n", b.ptr);
	buf_free(&b);
	return rc;
}

/* One message of the stream; msg NULL: over PT_MAX_MAIL_SIZE. */
static int one_message(const char *msg, size_t len, const char *pos, void *ctx)
{
	struct show *s = ctx;
	struct patch *p = NULL;
	int rc;

	(void)pos;
	s->index++;
	if (!msg)
		rc = pt_error_set(PT_ETOOBIG,
				  "message of %zu bytes is over "
				  "the %u-byte limit",
				  len, PT_MAX_MAIL_SIZE);
	else
		rc = patch_from_mail(&p, msg, len);
	if (!rc)
		rc = show_patch(s, p);
	patch_free(p);
	if (rc) {
		fflush(stdout);
		cli_fail("cannot parse '%s' (message %zu): %s", s->name,
			 s->index, pt_error_last());
		s->failed = 1;
	}
	return 0;
}

/*
 * The file is read as a stream (archive_mbox_foreach: zlib, so a gzip'd
 * mbox too), one message in memory at a time, however big the mbox.
 */
static int show_file(struct show *s, const char *path)
{
	struct archive_walk w;
	int rc;

	s->name = strcmp(path, "-") ? path : "<stdin>";
	rc = archive_mbox_foreach(&w, path, one_message, s);
	if (rc)
		return cli_fail_last();
	if (w.truncated) {
		s->failed = 1;
		cli_fail("'%s': compressed stream ends early (message %zu "
			 "and after not read)",
			 s->name, s->index + 1);
	}
	if (!s->nmsg && !s->failed)
		return cli_fail("no message in '%s'", s->name);
	return s->failed ? EXIT_FAIL : EXIT_OK;
}

static int git_err(const char *what, const char *arg)
{
	const git_error *e = git_error_last();

	return cli_fail("%s '%s': %s", what, arg,
			e && e->message ? e->message : "unknown error");
}

static int show_commit(struct show *s, const char *rev, const char *dir)
{
	git_repository *repo = NULL;
	git_object *obj = NULL, *commit = NULL;
	struct patch *p = NULL;
	int rc = EXIT_OK;

	git_libgit2_init();
	if (git_repository_open_ext(&repo, dir, 0, NULL)) {
		rc = git_err("cannot open repository", dir);
		goto out;
	}
	if (git_revparse_single(&obj, repo, rev) ||
	    git_object_peel(&commit, obj, GIT_OBJECT_COMMIT)) {
		rc = git_err("unknown revision", rev);
		goto out;
	}
	if (patch_from_commit(&p, repo, (git_commit *)commit) ||
	    show_patch(s, p))
		rc = cli_fail("cannot show '%s': %s", rev, pt_error_last());
	else
		cli_warn_uncounted(p);
out:
	patch_free(p);
	git_object_free(commit);
	git_object_free(obj);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return rc;
}

int cmd_show(int argc, char **argv, struct cli_ctx *ctx)
{
	struct show s = { NULL, 0, 0, 0, 0 };
	const char *file = NULL, *rev = NULL, *dir = NULL;
	size_t npos;
	int rc;
	const struct opt opts[] = {
		OPTION_FLAG(0, "json", &s.json),
		OPTION_STRING(0, "commit", &rev),
		OPTION_STRING(0, "repo", &dir),
		OPTION_END,
	};

	(void)ctx;
	rc = opt_parse("show", opts, argc, argv, &file, 1, &npos);
	if (rc)
		return opt_exit(rc);
	if (rev && file)
		return cli_usage("show", "give a FILE or --commit, not both");
	if (dir && !rev)
		return cli_usage("show", "--repo needs --commit");
	if (!rev && !file)
		return cli_usage("show", "no input given");
	rc = rev ? show_commit(&s, rev, dir ? dir : ".") : show_file(&s, file);
	if (fflush(stdout) || ferror(stdout))
		return cli_fail("cannot write the output");
	return rc;
}
