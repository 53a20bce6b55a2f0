/*
 * cli.c - the command line: global options, the command table, help and
 * dispatch to cmd_<name>() in bot/cmd_*.c (git's builtin/ pattern).  The
 * table below is the single list of commands; --help and the man page are
 * checked against it by the tests.  This layer owns printing errors and
 * exit codes: 0 ok, 1 failure, 2 usage.
 */
#include "bot/cmd/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scoring/patch/patch.h"
#include "bot/cmd/cmds.h"
#include "bot/cmd/opt.h"
#include "bot/cmd/schema.h"

static int cmd_help(int argc, char **argv, struct cli_ctx *ctx);
static int cmd_version(int argc, char **argv, struct cli_ctx *ctx);

const struct cli_command cli_commands[] = {
#define PT_COMMAND(name, usage, summary) { #name, cmd_##name, usage, summary },
#include "bot/cmd/cmds.inc"
#undef PT_COMMAND
	{ "help", cmd_help, "help [COMMAND]", "show help for a command" },
	{ "version", cmd_version, "version", "print the version" },
	{ NULL, NULL, NULL, NULL },
};

static const struct cli_command *find_command(const char *name)
{
	const struct cli_command *c;

	for (c = cli_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* One line on stderr: prefix, then the message. */
static void say(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int cli_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("error: ", fmt, ap);
	va_end(ap);
	return EXIT_FAIL;
}

int cli_fail_last(void)
{
	const char *m = pt_error_last();

	return cli_fail("%s", *m ? m : "unknown error");
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("warning: ", fmt, ap);
	va_end(ap);
}

void cli_warn_uncounted(const struct patch *p)
{
	size_t i;

	for (i = 0; p && i < p->nuncounted; i++)
		cli_warn("commit %.12s: the change to '%s' could not be read "
			 "(its blob is missing from the object database) and "
			 "was not counted",
			 p->commit_id ? p->commit_id : "?", p->uncounted[i]);
}

void cli_print_usage(FILE *f, const char *cmd)
{
	const struct cli_command *c = find_command(cmd);

	if (c)
		fprintf(f, "usage: patchtriage %s\n", c->usage);
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("error: ", fmt, ap);
	va_end(ap);
	cli_print_usage(stderr, cmd);
	return EXIT_USAGE;
}

void cli_print_help(const char *cmd)
{
	const struct cli_command *c = find_command(cmd);

	cli_print_usage(stdout, cmd);
	if (c)
		printf("\n%s\n", c->summary);
}

static void print_help(FILE *f)
{
	const struct cli_command *c;

	fprintf(f, "usage: patchtriage [--state DIR] [--config FILE] "
		   "[--quiet] [--verbose] <command> [<args>]\n"
		   "       patchtriage --help | --version\n\n"
		   "commands:\n");
	for (c = cli_commands; c->name; c++)
		fprintf(f, "   %-10s %s\n", c->name, c->summary);
	fprintf(f, "\nSee 'patchtriage help <command>' for a command's "
		   "options, and patchtriage(1).\n");
}

static int cmd_help(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct opt opts[] = { OPTION_END };
	const struct cli_command *c;
	const char *pos[2];
	size_t npos;
	int rc;

	(void)ctx;
	rc = opt_parse("help", opts, argc, argv, pos, 2, &npos);
	if (rc)
		return opt_exit(rc);
	if (!npos) {
		print_help(stdout);
		return EXIT_OK;
	}
	if (npos > 1)
		return cli_usage("help", "too many arguments");
	c = find_command(pos[0]);
	if (!c)
		return cli_usage("help", "'%s' is not a patchtriage command",
				 pos[0]);
	printf("usage: patchtriage %s\n\n%s\n", c->usage, c->summary);
	return EXIT_OK;
}

static int cmd_version(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct opt opts[] = { OPTION_END };
	size_t npos;
	int rc;

	(void)ctx;
	rc = opt_parse("version", opts, argc, argv, NULL, 0, &npos);
	if (rc)
		return opt_exit(rc);
	printf("patchtriage %s\n", PT_VERSION);
	return EXIT_OK;
}

static int mkdir_p(const char *path, mode_t mode)
{
	struct buf b = BUF_INIT;
	size_t i;
	int rc = 0;

	if (buf_addstr(&b, path))
		return PT_ENOMEM;
	for (i = 1; i <= b.len && !rc; i++) {
		if (b.ptr[i] != '/' && b.ptr[i] != '\0')
			continue;
		b.ptr[i] = '\0';
		if (mkdir(b.ptr, mode) && errno != EEXIST)
			rc = pt_error_set(PT_EIO, "cannot create '%s': %s",
					  b.ptr, strerror(errno));
		if (i < b.len)
			b.ptr[i] = '/';
	}
	buf_free(&b);
	return rc;
}

int cli_state_dir(struct cli_ctx *ctx, const char **out)
{
	int rc;

	rc = mkdir_p(ctx->state_dir, 0700);
	if (rc)
		return rc;
	*out = ctx->state_dir;
	return 0;
}

static void warn_now(const char *msg, void *ctx)
{
	(void)ctx;
	cli_warn("%s", msg);
}

int cli_config(struct cli_ctx *ctx, struct config **out)
{
	const char *const *w;
	int rc;

	if (!ctx->cfg) {
		rc = config_open(&ctx->cfg, ctx->config_file);
		if (rc)
			return rc;
		for (w = config_warnings(ctx->cfg); *w; w++)
			cli_warn("%s", *w);
		/* later ones (a secret read by the command) as they come */
		config_on_warning(ctx->cfg, warn_now, NULL);
	}
	*out = ctx->cfg;
	return 0;
}

int cli_db(struct cli_ctx *ctx, struct db **out)
{
	struct buf path = BUF_INIT;
	const char *dir;
	int rc;

	if (!ctx->db) {
		rc = cli_state_dir(ctx, &dir);
		if (!rc)
			rc = buf_addf(&path, "%s/state.db", dir);
		if (!rc)
			rc = db_open(&ctx->db, path.ptr, &bot_db_owners);
		buf_free(&path);
		if (rc)
			return rc;
	}
	*out = ctx->db;
	return 0;
}

int cli_db_existing(struct cli_ctx *ctx, struct db **out)
{
	struct buf path = BUF_INIT;
	struct stat st;
	int rc;

	if (!ctx->db) {
		rc = buf_addf(&path, "%s/state.db", ctx->state_dir);
		if (!rc && stat(path.ptr, &st))
			rc = pt_error_set(PT_ENOTFOUND,
					  "no state database '%s': %s (see "
					  "--state)",
					  path.ptr, strerror(errno));
		buf_free(&path);
		if (rc)
			return rc;
	}
	return cli_db(ctx, out);
}

/* A configuration file named by --config or $PATCHTRIAGE_CONFIG exists. */
static int config_file_ok(const struct cli_ctx *ctx)
{
	if (!ctx->config_file || !access(ctx->config_file, F_OK))
		return 0;
	return pt_error_set(PT_ENOTFOUND, "config file '%s': %s",
			    ctx->config_file, strerror(errno));
}

static char *default_dir(const char *xdg_var, const char *fallback)
{
	struct buf b = BUF_INIT;
	const char *x = getenv(xdg_var), *home = getenv("HOME");

	if (x && *x)
		buf_addf(&b, "%s/patchtriage", x);
	else
		buf_addf(&b, "%s/%s/patchtriage", home && *home ? home : ".",
			 fallback);
	return buf_detach(&b, NULL);
}

static int default_config(struct cli_ctx *ctx)
{
	const char *env = getenv("PATCHTRIAGE_CONFIG");
	struct buf path = BUF_INIT;
	char *dir;

	if (env && *env) {
		ctx->config_file = pt_strdup(env);
		return ctx->config_file ? 0 : PT_ENOMEM;
	}
	dir = default_dir("XDG_CONFIG_HOME", ".config");
	if (!dir || buf_addf(&path, "%s/config", dir)) {
		free(dir);
		return PT_ENOMEM;
	}
	free(dir);
	/* the default file is optional: no file, no configuration */
	if (access(path.ptr, F_OK) == 0)
		ctx->config_file = buf_detach(&path, NULL);
	buf_free(&path);
	return 0;
}

/* Parse options before the command; returns the index of the command. */
static int parse_globals(int argc, char **argv, struct cli_ctx *ctx, int *i)
{
	for (*i = 1; *i < argc && argv[*i][0] == '-'; (*i)++) {
		const char *a = argv[*i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			print_help(stdout);
			return 1;
		} else if (!strcmp(a, "--version")) {
			printf("patchtriage %s\n", PT_VERSION);
			return 1;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			ctx->quiet = 1;
		} else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
			ctx->verbose++;
		} else if (!strcmp(a, "--state") || !strcmp(a, "--config")) {
			char **dst = a[2] == 's' ? &ctx->state_dir
						 : &ctx->config_file;
			if (*i + 1 >= argc) {
				fprintf(stderr, "error: %s needs a value\n", a);
				return -1;
			}
			free(*dst);
			*dst = pt_strdup(argv[++*i]);
		} else if (!strncmp(a, "--state=", 8)) {
			free(ctx->state_dir);
			ctx->state_dir = pt_strdup(a + 8);
		} else if (!strncmp(a, "--config=", 9)) {
			free(ctx->config_file);
			ctx->config_file = pt_strdup(a + 9);
		} else {
			fprintf(stderr, "error: unknown option '%s'\n", a);
			print_help(stderr);
			return -1;
		}
	}
	return 0;
}

int cli_main(int argc, char **argv)
{
	struct cli_ctx ctx;
	const struct cli_command *c;
	int i, rc;

	memset(&ctx, 0, sizeof(ctx));
	ctx.argv0 = argv[0];
	if (default_config(&ctx))
		return cli_fail_last();
	rc = parse_globals(argc, argv, &ctx, &i);
	if (rc) {
		rc = rc > 0 ? EXIT_OK : EXIT_USAGE;
		goto out;
	}
	if (!ctx.state_dir)
		ctx.state_dir = default_dir("XDG_STATE_HOME", ".local/state");
	if (i >= argc) {
		print_help(stderr);
		rc = EXIT_USAGE;
		goto out;
	}
	c = find_command(argv[i]);
	if (!c) {
		fprintf(stderr,
			"error: '%s' is not a patchtriage command; see "
			"'patchtriage --help'\n",
			argv[i]);
		rc = EXIT_USAGE;
		goto out;
	}
	if (c->fn != cmd_help && c->fn != cmd_version && config_file_ok(&ctx))
		rc = cli_fail_last();
	else
		rc = c->fn(argc - i, argv + i, &ctx);
out:
	db_close(ctx.db);
	config_free(ctx.cfg);
	free(ctx.state_dir);
	free(ctx.config_file);
	return rc;
}

void cli_print_json(const json_t *j)
{
	char *txt = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (txt)
		puts(txt);
	free(txt);
}

unsigned cli_default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > 2 ? 2 : (unsigned)n;
}
