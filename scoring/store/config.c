/*
 * config.c - git-config syntax configuration through libgit2 (see
 * config.h).  libgit2 is initialised here on first use; the process-wide
 * git_libgit2_init() count is balanced by config_free().
 */
#include "scoring/store/config.h"

#include <errno.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scoring/store/secret_cmd.h"

struct config {
	git_config *cfg;
	char *path;
	char **warnings;
	size_t nwarnings;
	config_warn_fn on_warn; /* told of each warning as it comes */
	void *on_warn_ctx;
};

static int git_err(const char *what, const char *path)
{
	const git_error *e = git_error_last();

	return pt_error_set(PT_EINVAL, "%s '%s': %s", what, path,
			    e && e->message ? e->message : "unknown error");
}

int config_open(struct config **out, const char *path)
{
	struct config *c;
	int rc = 0;

	*out = NULL;
	c = pt_calloc(1, sizeof(*c));
	if (!c)
		return PT_ENOMEM;
	git_libgit2_init();
	c->path = pt_strdup(path ? path : "");
	if (!c->path) {
		rc = PT_ENOMEM;
		goto fail;
	}
	if (git_config_new(&c->cfg) < 0) {
		rc = git_err("cannot create configuration", c->path);
		goto fail;
	}
	if (path && *path) {
		if (access(path, R_OK)) {
			rc = pt_error_set(PT_EIO, "cannot read config '%s': %s",
					  path, strerror(errno));
			goto fail;
		}
		if (git_config_add_file_ondisk(c->cfg, path,
					       GIT_CONFIG_LEVEL_APP, NULL,
					       1) < 0) {
			rc = git_err("cannot parse config", path);
			goto fail;
		}
	}
	*out = c;
	return 0;
fail:
	config_free(c);
	return rc;
}

void config_free(struct config *c)
{
	size_t i;

	if (!c)
		return;
	if (c->cfg)
		git_config_free(c->cfg);
	for (i = 0; i < c->nwarnings; i++)
		free(c->warnings[i]);
	free(c->warnings);
	free(c->path);
	free(c);
	git_libgit2_shutdown();
}

const char *config_path(const struct config *c)
{
	return c->path;
}

static int warn(struct config *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int warn(struct config *c, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	char **w;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = buf_addvf(&b, fmt, ap);
	va_end(ap);
	if (rc)
		return rc;
	w = pt_reallocarray(c->warnings, c->nwarnings + 2, sizeof(*w));
	if (!w) {
		buf_free(&b);
		return PT_ENOMEM;
	}
	c->warnings = w;
	w[c->nwarnings++] = buf_detach(&b, NULL);
	w[c->nwarnings] = NULL;
	if (c->on_warn)
		c->on_warn(w[c->nwarnings - 1], c->on_warn_ctx);
	return 0;
}

void config_on_warning(struct config *c, config_warn_fn fn, void *ctx)
{
	c->on_warn = fn;
	c->on_warn_ctx = ctx;
}

const char *const *config_warnings(const struct config *c)
{
	static const char *const none[] = { NULL };

	return c->nwarnings ? (const char *const *)c->warnings : none;
}

int config_get_string(const struct config *c, const char *key, const char *def,
		      char **out)
{
	git_config_entry *e = NULL;
	int rc;

	*out = NULL;
	rc = git_config_get_entry(&e, c->cfg, key);
	if (rc == GIT_ENOTFOUND) {
		if (!def)
			return 0;
		*out = pt_strdup(def);
		return *out ? 0 : PT_ENOMEM;
	}
	if (rc < 0)
		return git_err("cannot read key", key);
	*out = pt_strdup(e->value ? e->value : "");
	git_config_entry_free(e);
	return *out ? 0 : PT_ENOMEM;
}

/*
 * What a git_config_get_*() result rc means for KEY: 1 when it is not
 * set, 0 when it was read, else an error saying it is not WHAT.
 */
static int got(const struct config *c, const char *key, int rc,
	       const char *what)
{
	if (rc == GIT_ENOTFOUND)
		return 1;
	if (rc < 0)
		return pt_error_set(PT_EINVAL, "config '%s': %s is not %s",
				    c->path, key, what);
	return 0;
}

int config_get_int(const struct config *c, const char *key, long def, long *out)
{
	int64_t v;
	int rc;

	rc = got(c, key, git_config_get_int64(&v, c->cfg, key), "a number");
	if (rc < 0)
		return rc;
	*out = rc ? def : (long)v;
	return 0;
}

int config_get_int_range(const struct config *c, const char *key, long def,
			 long min, long max, long *out)
{
	int rc = config_get_int(c, key, def, out);

	if (!rc && (*out < min || *out > max))
		rc = pt_error_set(PT_EINVAL,
				  "config '%s': %s = %ld is out of range: it "
				  "must be from %ld to %ld",
				  c->path, key, *out, min, max);
	return rc;
}

int config_get_double(const struct config *c, const char *key, double def,
		      double *out)
{
	char *s = NULL, *end;
	int rc;

	rc = config_get_string(c, key, NULL, &s);
	if (rc)
		return rc;
	if (!s) {
		*out = def;
		return 0;
	}
	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end)
		rc = pt_error_set(PT_EINVAL,
				  "config '%s': %s = '%s' is not a number",
				  c->path, key, s);
	free(s);
	return rc;
}

int config_get_bool(const struct config *c, const char *key, int def, int *out)
{
	int v, rc;

	rc = got(c, key, git_config_get_bool(&v, c->cfg, key), "a boolean");
	if (rc < 0)
		return rc;
	*out = rc ? def : v;
	return 0;
}

void config_strv_free(char **v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

int config_strv_push(char ***v, size_t *n, const char *s)
{
	char **nv;

	nv = pt_reallocarray(*v, *n + 2, sizeof(**v));
	if (!nv)
		return PT_ENOMEM;
	*v = nv;
	nv[*n] = pt_strdup(s);
	if (!nv[*n])
		return PT_ENOMEM;
	nv[++*n] = NULL;
	return 0;
}

/*
 * End a list built with config_strv_push(): on rc 0, *out is v (an empty
 * list when nothing was pushed); else v is freed and rc returned.
 */
static int strv_finish(char ***out, char **v, int rc)
{
	if (!rc && !v) {
		v = pt_calloc(1, sizeof(*v));
		rc = v ? 0 : PT_ENOMEM;
	}
	if (rc) {
		config_strv_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

int config_get_all(const struct config *c, const char *key, char ***out)
{
	git_config_iterator *it = NULL;
	git_config_entry *e;
	char **v = NULL;
	size_t n = 0;
	int rc = 0;

	*out = NULL;
	if (git_config_multivar_iterator_new(&it, c->cfg, key, NULL) < 0)
		return git_err("cannot read key", key);
	while (!rc && git_config_next(&e, it) == 0)
		rc = config_strv_push(&v, &n, e->value ? e->value : "");
	git_config_iterator_free(it);
	return strv_finish(out, v, rc);
}

int config_subsystems(const struct config *c, char ***out)
{
	git_config_iterator *it = NULL;
	git_config_entry *e;
	char **v = NULL;
	size_t n = 0, i;
	int rc = 0, seen;

	*out = NULL;
	/* a plain iterator: libgit2 1.5's regex one leaks its match data */
	if (git_config_iterator_new(&it, c->cfg) < 0)
		return git_err("cannot list subsystems in", c->path);
	while (!rc && git_config_next(&e, it) == 0) {
		/* subsystem.NAME.key: NAME may itself contain dots */
		const char *s, *dot;
		char *name;

		if (strncmp(e->name, "subsystem.", 10))
			continue;
		s = e->name + 10;
		dot = strrchr(s, '.');
		if (!dot || dot == s)
			continue;
		name = pt_strndup(s, (size_t)(dot - s));
		if (!name) {
			rc = PT_ENOMEM;
			break;
		}
		for (seen = 0, i = 0; i < n; i++)
			seen |= !strcmp(v[i], name);
		if (!seen)
			rc = config_strv_push(&v, &n, name);
		free(name);
	}
	git_config_iterator_free(it);
	return strv_finish(out, v, rc);
}

void pt_secret_free(char *s)
{
	volatile char *p = s;

	if (!s)
		return;
	while (*p)
		*p++ = '\0';
	free(s);
}

static char *expand_home(const char *path)
{
	struct buf b = BUF_INIT;
	const char *home = getenv("HOME");

	if (path[0] == '~' && path[1] == '/' && home) {
		if (buf_addstr(&b, home) || buf_addstr(&b, path + 1))
			return NULL;
		return buf_detach(&b, NULL);
	}
	return pt_strdup(path);
}

/* First line of text, without the newline, in a fresh string. */
static char *first_line(const char *s, size_t len)
{
	size_t n = 0;

	while (n < len && s[n] != '\n' && s[n] != '\r')
		n++;
	return pt_strndup(s, n);
}

static int secret_from_file(struct config *c, const char *key, const char *file,
			    char **out)
{
	struct buf b = BUF_INIT;
	struct stat st;
	char *path;
	int rc;

	path = expand_home(file);
	if (!path)
		return PT_ENOMEM;
	if (stat(path, &st)) {
		rc = pt_error_set(PT_EIO,
				  "config '%s': %s: cannot read '%s': %s",
				  c->path, key, path, strerror(errno));
		goto out;
	}
	if (st.st_mode & 077)
		warn(c,
		     "%s: '%s' is readable by others (mode %03o); "
		     "chmod 600 it",
		     key, path, (unsigned)(st.st_mode & 0777));
	buf_init(&b, 64 * 1024);
	rc = pt_read_file(&b, path, 64 * 1024);
	if (rc) {
		rc = pt_error_set(rc, "config '%s': %s: cannot read '%s'",
				  c->path, key, path);
		goto out;
	}
	*out = first_line(b.ptr, b.len);
	rc = *out ? 0 : PT_ENOMEM;
	if (!rc && !**out) {
		pt_secret_free(*out);
		*out = NULL;
		rc = pt_error_set(PT_EINVAL, "config '%s': %s: '%s' is empty",
				  c->path, key, path);
	}
out:
	if (b.cap)
		memset(b.ptr, 0, b.cap);
	buf_free(&b);
	free(path);
	return rc;
}

/* The error for a password command that did not end well, or 0. */
static int command_failed(struct config *c, const char *key, long timeout,
			  enum secret_cmd_end end, int code)
{
	if (end == SECRET_CMD_TIMED_OUT)
		return pt_error_set(PT_EIO,
				    "config '%s': %s timed out after %ld s "
				    "and was killed (%s-timeout)",
				    c->path, key, timeout, key);
	if (end == SECRET_CMD_SIGNALLED)
		return pt_error_set(PT_EIO,
				    "config '%s': %s failed (killed by "
				    "signal %d)",
				    c->path, key, code);
	if (code)
		return pt_error_set(PT_EIO,
				    "config '%s': %s failed (exit status %d)",
				    c->path, key, code);
	return 0;
}

static int cannot_run(struct config *c, const char *key, int rc)
{
	char *why = pt_strdup(pt_error_last());

	rc = pt_error_set(rc, "config '%s': %s: cannot run: %s", c->path, key,
			  why ? why : "?");
	free(why);
	return rc;
}

/* KEY-timeout in seconds, SECRET_CMD_TIMEOUT when unset; above 0. */
static int command_timeout(struct config *c, const char *key, long *out)
{
	char tkey[300];
	int rc;

	snprintf(tkey, sizeof(tkey), "%s-timeout", key);
	rc = config_get_int(c, tkey, SECRET_CMD_TIMEOUT, out);
	if (!rc && (*out <= 0 || *out > 24 * 3600))
		rc = pt_error_set(PT_EINVAL,
				  "config '%s': %s must be a number of "
				  "seconds from 1 to 86400",
				  c->path, tkey);
	return rc;
}

static int secret_from_command(struct config *c, const char *key,
			       const char *cmd, char **out)
{
	struct buf b = BUF_INIT;
	enum secret_cmd_end end;
	long timeout;
	int code, rc;

	rc = command_timeout(c, key, &timeout);
	if (rc)
		return rc;
	buf_init(&b, 64 * 1024);
	rc = secret_cmd_run(cmd, timeout * 1000, &b, &end, &code);
	if (rc == PT_ETOOBIG)
		rc = pt_error_set(PT_EINVAL,
				  "config '%s': %s printed more than 64 KiB",
				  c->path, key);
	else if (rc)
		rc = cannot_run(c, key, rc);
	if (!rc)
		rc = command_failed(c, key, timeout, end, code);
	if (!rc) {
		*out = first_line(b.ptr, b.len);
		rc = *out ? 0 : PT_ENOMEM;
	}
	if (!rc && !**out) {
		pt_secret_free(*out);
		*out = NULL;
		rc = pt_error_set(PT_EINVAL, "config '%s': %s printed nothing",
				  c->path, key);
	}
	if (b.cap)
		memset(b.ptr, 0, b.cap);
	buf_free(&b);
	return rc;
}

int config_read_secret(struct config *c, const char *section, char **out)
{
	static const char *const inline_keys[] = { "token", "password" };
	char key[256], *v = NULL;
	size_t i;
	int rc;

	*out = NULL;
	snprintf(key, sizeof(key), "%s.token-file", section);
	rc = config_get_string(c, key, NULL, &v);
	if (!rc && v) {
		rc = secret_from_file(c, key, v, out);
		free(v);
		return rc;
	}
	snprintf(key, sizeof(key), "%s.password-command", section);
	rc = rc ? rc : config_get_string(c, key, NULL, &v);
	if (!rc && v) {
		rc = secret_from_command(c, key, v, out);
		free(v);
		return rc;
	}
	for (i = 0; !rc && i < 2; i++) {
		snprintf(key, sizeof(key), "%s.%s", section, inline_keys[i]);
		rc = config_get_string(c, key, NULL, &v);
		if (!rc && v) {
			warn(c,
			     "%s is written in the config file; use "
			     "%s.token-file or %s.password-command",
			     key, section, section);
			*out = v;
			return 0;
		}
	}
	return rc ? rc : PT_ENOTFOUND;
}
