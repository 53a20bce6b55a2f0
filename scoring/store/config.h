/*
 * config.h - patchtriage's configuration, in git-config syntax, read with
 * libgit2's config API so that includes, quoting and multivars behave as
 * in git.  It owns lookups with defaults, the list of subsystem sections,
 * and reading secrets (token-file, password-command) without ever putting
 * them in an error message.  Problems that are not errors (a secret file
 * that others can read) are collected as warnings for the CLI to print,
 * and passed as they come to a function the CLI sets.
 */
#ifndef PT_CONFIG_H
#define PT_CONFIG_H

#include <stddef.h>

#include "scoring/util/pt.h"

struct config;

/* Open PATH; NULL or a missing default path gives an empty config. */
int config_open(struct config **out, const char *path);
void config_free(struct config *cfg);
const char *config_path(const struct config *cfg);

/* Lookups: *out is the default when the key is absent. */
int config_get_string(const struct config *cfg, const char *key,
		      const char *def, char **out);
int config_get_int(const struct config *cfg, const char *key, long def,
		   long *out);
/* config_get_int, and an error naming the key unless min <= *out <= max. */
#define CONFIG_MAX_SECONDS 86400L /* the longest timeout key: a day */
int config_get_int_range(const struct config *cfg, const char *key, long def,
			 long min, long max, long *out);
int config_get_double(const struct config *cfg, const char *key, double def,
		      double *out);
int config_get_bool(const struct config *cfg, const char *key, int def,
		    int *out);
/* All values of a multivar (e.g. imap.folder), NULL-terminated. */
int config_get_all(const struct config *cfg, const char *key, char ***out);
void config_strv_free(char **v);
/* Append a copy of s to the n-element vector *v, keeping it NULL-ended. */
int config_strv_push(char ***v, size_t *n, const char *s);

/* Names of [subsystem "NAME"] sections, NULL-terminated. */
int config_subsystems(const struct config *cfg, char ***out);

/*
 * The secret of SECTION: SECTION.token-file (a file whose first line is
 * the secret; ~ expanded), else SECTION.password-command (run by
 * /bin/sh, first line of its output; killed with its process group after
 * SECTION.password-command-timeout seconds, default 10), else
 * SECTION.token / .password written inline (warned about).  PT_ENOTFOUND
 * when none is configured.  Errors name the key, never the value.
 */
int config_read_secret(struct config *cfg, const char *section, char **out);

/* Warnings gathered so far (NULL-terminated; owned by cfg). */
const char *const *config_warnings(const struct config *cfg);
/*
 * Have fn(message, ctx) called for each warning from now on, as it is
 * recorded: a secret is read long after the configuration is opened, so
 * its warnings come after config_warnings() was first looked at.
 */
typedef void (*config_warn_fn)(const char *msg, void *ctx);
void config_on_warning(struct config *cfg, config_warn_fn fn, void *ctx);

/* Wipe and free a secret. */
void pt_secret_free(char *s);

#endif
