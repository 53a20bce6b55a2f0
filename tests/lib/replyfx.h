/*
 * replyfx.h - the fixture of the reply tests (test_reply.c,
 * test_reply_send.c, test_reply_policy.c): a temporary directory with
 * MAINTAINERS, passwords and one configuration per [smtp] case, three
 * SMTP sinks on loopback (plain, STARTTLS with AUTH, SMTPS; see
 * smtpsim.h), the policy loaded from the plain configuration, a fresh
 * state database per test, and the helpers that read what the sinks got
 * (headers, envelope, body) and what the outbox holds.
 */
#ifndef PT_REPLYFX_H
#define PT_REPLYFX_H

#include <stddef.h>
#include <stdint.h>

#include "bot/mail/reply.h"
#include "bot/mail/smtp.h"
#include "bot/outbox/policy.h"
#include "bot/outbox/store.h"
#include "scoring/patch/patch.h"
#include "smtpsim.h"

#define MODEL "m-20261101-risk"
#define FROM "patchtriage <bot@pt.example>"
#define PASSWORD "s3cret-Pa55"
#define WRONG_PASSWORD "not-the-Pa55word"
#define PATCH_ID "20261112-acme-v2-2-rene@example.de"
#define DEAD_ADDRESS "gone@maint.example" /* the plain sink refuses it */
#define LONG_REASON                                                      \
	"the changed function acme_open() was modified by 4 earlier "    \
	"commits that later needed a fix, among them the café adapter " \
	"reset path"
struct rfx_env {
	char dir[64];
	struct smtpsim plain, starttls, smtps;
	struct policy *pol;
	struct db *db;
	int ndb;
};

/* The fixture's state; E because every test reads it. */
extern struct rfx_env E;

/* ---- helpers ------------------------------------------------------- */

/* A path from a format; the result lives until 8 more calls. */
char *rfx_pathf(const char *fmt, ...);
/* DIR/NAME.conf: the common part plus an [smtp] section. */
int rfx_write_conf(const char *name, const char *smtp);
/* The [smtp] options of DIR/NAME.conf. */
void rfx_smtp_opts(struct smtp_opts *o, const char *name);
/* The mail pwsim_data_dir()/reply/NAME, parsed. */
struct patch *rfx_load(const char *name);
void rfx_replace(char **field, const char *value);
/* A risk reply's input with two reasons, at probability. */
struct reply_in rfx_risk_in(double probability);

/* Header NAME unfolded (CRLF before WSP removed); *n: how many there are. */
char *rfx_header(const char *msg, const char *name, int *n);
void rfx_assert_header(const char *msg, const char *name, const char *want);
/* Sorted "to" addresses of an envelope, ", "-joined; *from: MAIL FROM. */
char *rfx_env_rcpts(const char *env, char **from);
/*
 * The body: CRLF line ends only, valid UTF-8, no line over 72 characters.
 * Returns it with all whitespace runs folded to one space.
 */
char *rfx_check_body(const char *msg);
/* <pt-KIND-HEX@DOMAIN>, computed here from its definition in reply.h. */
char *rfx_expected_msgid(const char *msgid, const char *version,
			 const char *kind);
/* The outbox row's column col for a dedupe key (malloc'd, or NULL). */
char *rfx_outbox_field(const char *key, const char *col);
long rfx_outbox_rows(void);
/* The one message sink s holds. */
void rfx_one_message(const struct smtpsim *s, char **msg, char **env);
/*
 * Send p's reply through the plain sink; it must go out as the one
 * message the sink holds, returned in *msg and *env.
 */
void rfx_sent_one(struct reply_out *out, const struct patch *p,
		  const struct reply_in *in, char **msg, char **env);

/* ---- cmocka fixtures ----------------------------------------------- */

/* The directory and the sinks (exit 77 without python3). */
int rfx_group_setup(void **state);
int rfx_group_teardown(void **state);
/* Each test: a fresh state database and empty sinks. */
int rfx_setup(void **state);
int rfx_teardown(void **state);

#endif
