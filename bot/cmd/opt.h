/*
 * opt.h - the one option parser of every command (git's parse-options,
 * libgit2's cli/opt.c): a command declares its options as a table and
 * gets --opt=value and --opt value, "--" to end the options, --help/-h,
 * numbers that are checked (whole, in range) and its errors printed the
 * one way (cli_usage: "error: --horizon: 'abc' is not a whole number",
 * the usage line, exit 2).  What the table does not say (which options
 * go together, a subcommand's name) stays with the command.
 */
#ifndef PT_OPT_H
#define PT_OPT_H

#include <limits.h>
#include <stddef.h>

#include "bot/cmd/cli.h"

enum opt_type {
	OPT_END = 0, /* ends the table */
	OPT_FLAG,    /* int *: set to 1; takes no value */
	OPT_STRING,  /* const char **: points into argv */
	OPT_INT,     /* long long *: a whole number from min to max */
	OPT_DOUBLE,  /* double *: a number from dmin to dmax */
};

/* An OPT_INT without an upper bound. */
#define OPT_NOMAX LLONG_MAX

struct opt {
	enum opt_type type;
	char short_name;       /* 'q' for -q, or 0 */
	const char *long_name; /* "horizon" for --horizon */
	void *value;	       /* where the value goes, see enum opt_type */
	long long min, max;    /* OPT_INT */
	double dmin, dmax;     /* OPT_DOUBLE */
};

/* Rows of a table, after git's OPT_BOOL() and friends. */
#define OPTION_FLAG(s, l, v)                                           \
	{                                                              \
		.type = OPT_FLAG, .short_name = (s), .long_name = (l), \
		.value = (v)                                           \
	}
#define OPTION_STRING(s, l, v)                                           \
	{                                                                \
		.type = OPT_STRING, .short_name = (s), .long_name = (l), \
		.value = (v)                                             \
	}
#define OPTION_INT(s, l, v, lo, hi)                                   \
	{                                                             \
		.type = OPT_INT, .short_name = (s), .long_name = (l), \
		.value = (v), .min = (lo), .max = (hi)                \
	}
#define OPTION_DOUBLE(s, l, v, lo, hi)                                   \
	{                                                                \
		.type = OPT_DOUBLE, .short_name = (s), .long_name = (l), \
		.value = (v), .dmin = (lo), .dmax = (hi)                 \
	}
#define OPTION_END              \
	{                       \
		.type = OPT_END \
	}

/* opt_parse() printed the usage for --help: the command exits 0. */
#define OPT_HELP (-1)

/*
 * Parse argv[1..argc) of command cmd (its name in the command table)
 * against opts.  Options may come anywhere; an argument that is not an
 * option ("-" is not), and every argument after "--", is positional and
 * goes, in order, to pos[0..*npos), at most maxpos of them (pos may be
 * NULL when maxpos is 0).  A value is written only when its option is
 * given, so the caller sets the defaults; an option given twice keeps
 * the last value.  Returns 0 to go on, OPT_HELP after printing the usage
 * for --help or -h, or EXIT_USAGE after printing an error.
 */
int opt_parse(const char *cmd, const struct opt *opts, int argc, char **argv,
	      const char **pos, size_t maxpos, size_t *npos);

/* The exit code of a command whose opt_parse() returned rc != 0. */
static inline int opt_exit(int rc)
{
	return rc == OPT_HELP ? EXIT_OK : rc;
}

#endif
