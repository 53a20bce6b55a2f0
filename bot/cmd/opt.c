/*
 * opt.c - the option parser every command shares (see opt.h).  It owns
 * the rules for what an option looks like and how a number is read;
 * what the options mean is the command's.  It prints only through
 * cli_usage() and cli_print_help(), as the CLI layer does.
 */
#include "bot/cmd/opt.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The option named by "--name" (n bytes of name), or NULL. */
static const struct opt *find_long(const struct opt *opts, const char *name,
				   size_t n)
{
	const struct opt *o;

	for (o = opts; o->type != OPT_END; o++)
		if (o->long_name && strlen(o->long_name) == n &&
		    !strncmp(o->long_name, name, n))
			return o;
	return NULL;
}

static const struct opt *find_short(const struct opt *opts, char c)
{
	const struct opt *o;

	for (o = opts; o->type != OPT_END; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

/*
 * The value of an OPT_INT or OPT_DOUBLE; what the user typed for the
 * option is name (len bytes, "--horizon" of "--horizon=abc").
 */
static int set_int(const char *cmd, const struct opt *o, const char *name,
		   int len, const char *v)
{
	long long n;
	char *end;

	if (!*v || isspace((unsigned char)*v))
		return cli_usage(cmd, "%.*s: '%s' is not a whole number", len,
				 name, v);
	errno = 0;
	n = strtoll(v, &end, 10);
	if (*end)
		return cli_usage(cmd, "%.*s: '%s' is not a whole number", len,
				 name, v);
	if (errno == ERANGE || n < o->min || n > o->max) {
		if (o->max == OPT_NOMAX)
			return cli_usage(cmd,
					 "%.*s: '%s' is out of range "
					 "(at least %lld)",
					 len, name, v, o->min);
		return cli_usage(cmd,
				 "%.*s: '%s' is out of range (%lld to "
				 "%lld)",
				 len, name, v, o->min, o->max);
	}
	*(long long *)o->value = n;
	return 0;
}

static int set_double(const char *cmd, const struct opt *o, const char *name,
		      int len, const char *v)
{
	double d;
	char *end;

	if (!*v || isspace((unsigned char)*v))
		return cli_usage(cmd, "%.*s: '%s' is not a number", len, name,
				 v);
	errno = 0;
	d = strtod(v, &end);
	if (*end || isnan(d))
		return cli_usage(cmd, "%.*s: '%s' is not a number", len, name,
				 v);
	if (d < o->dmin || d > o->dmax)
		return cli_usage(cmd, "%.*s: '%s' is out of range (%g to %g)",
				 len, name, v, o->dmin, o->dmax);
	*(double *)o->value = d;
	return 0;
}

static int set_value(const char *cmd, const struct opt *o, const char *name,
		     int len, const char *v)
{
	switch (o->type) {
	case OPT_STRING:
		*(const char **)o->value = v;
		return 0;
	case OPT_INT:
		return set_int(cmd, o, name, len, v);
	case OPT_DOUBLE:
		return set_double(cmd, o, name, len, v);
	default:
		return 0;
	}
}

/*
 * One option at argv[*i]: "--name", "--name=value" or "-c"; a value that
 * is not after '=' is the next argument, whatever it looks like.
 */
static int one_option(const char *cmd, const struct opt *opts, int argc,
		      char **argv, int *i)
{
	const char *a = argv[*i], *eq = NULL;
	const struct opt *o;
	int len;

	if (a[1] == '-') {
		eq = strchr(a + 2, '=');
		len = eq ? (int)(eq - a) : (int)strlen(a);
		o = find_long(opts, a + 2, (size_t)len - 2);
	} else {
		len = (int)strlen(a);
		o = len == 2 ? find_short(opts, a[1]) : NULL;
	}
	if (!o)
		return cli_usage(cmd, "unknown option '%.*s'", len, a);
	if (o->type == OPT_FLAG) {
		if (eq)
			return cli_usage(cmd, "%.*s takes no value", len, a);
		*(int *)o->value = 1;
		return 0;
	}
	if (eq)
		return set_value(cmd, o, a, len, eq + 1);
	if (*i + 1 >= argc)
		return cli_usage(cmd, "%s needs a value", a);
	++*i;
	return set_value(cmd, o, a, len, argv[*i]);
}

int opt_parse(const char *cmd, const struct opt *opts, int argc, char **argv,
	      const char **pos, size_t maxpos, size_t *npos)
{
	int i, rc, options = 1;

	*npos = 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (options && !strcmp(a, "--")) {
			options = 0;
			continue;
		}
		if (options && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
			cli_print_help(cmd);
			return OPT_HELP;
		}
		if (options && a[0] == '-' && a[1]) {
			rc = one_option(cmd, opts, argc, argv, &i);
			if (rc)
				return rc;
			continue;
		}
		if (*npos >= maxpos)
			return cli_usage(cmd, "unexpected argument '%s'", a);
		pos[(*npos)++] = a;
	}
	return 0;
}
