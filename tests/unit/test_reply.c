/*
 * test_reply.c - the reply path end to end against a real SMTP server:
 * bot/mail/reply.c builds the mail from templates/ (scoring/util/template.c),
 * bot/outbox/policy.c decides and picks the recipients, bot/mail/smtp.c sends it
 * through libcurl to tests/lib/smtpsink.py (aiosmtpd) on loopback, and
 * every check reads what the sink stored (DIR/mail/new and the
 * envelope): threading headers, Message-ID, recipients, body; never
 * twice, also after a sender killed with SIGKILL before and after DATA;
 * no header injection and header lines within RFC 5322's limits;
 * opt-in, actions, thresholds and the rate limit; a recipient refused by
 * the relay; STARTTLS and SMTPS verified against the test's own CA, and
 * AUTH with the password kept out of every error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scoring/store/config.h"
#include "scoring/patch/patch.h"
#include "bot/outbox/policy.h"
#include "pwsim.h"
#include "bot/mail/reply.h"
#include "bot/mail/smtp.h"
#include "smtpsim.h"
#include "bot/outbox/store.h"

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

static const char maintainers[] =
	"ACME ETHERNET DRIVER\n"
	"M:\tAlice Acme <alice@maint.example>\n"
	"R:\tBob Reviewer <Bob@Rev.Example>\n"
	"L:\tnetdev@vger.kernel.org\n"
	"S:\tMaintained\n"
	"F:\tdrivers/net/ethernet/acme/\n"
	"\n"
	"NETWORKING DRIVERS\n"
	"M:\tDave Net <dave@net.example>\n"
	"L:\tnetdev@vger.kernel.org\n"
	"S:\tMaintained\n"
	"F:\tdrivers/net/\n"
	"\n"
	"THE REST\n"
	"M:\tLinus Torvalds <torvalds@linux-foundation.org>\n"
	"L:\tlinux-kernel@vger.kernel.org\n"
	"S:\tBuried alive in reporters\n"
	"F:\t*\n"
	"F:\t*/\n";

/* Everything but [smtp]; the subsystems are matched in this order. */
static const char conf_common[] =
	"[reply]\n"
	"\tfrom = " FROM "\n"
	"\tcontact = netdev-maintainers@pt.example\n"
	"\ttemplates = %s/../../templates\n"
	"[policy]\n"
	"\tmaintainers-file = %s/MAINTAINERS\n"
	"[subsystem \"acme\"]\n"
	"\tlist = netdev@vger.kernel.org\n"
	"\tmaintainers = ACME ETHERNET DRIVER\n"
	"\tactions = check reply\n"
	"\trisk-threshold = 0.30\n"
	"\trecipients = author list maintainers\n"
	"\trate-limit = 0\n"
	"[subsystem \"gpio\"]\n"
	"\tlist-id = linux-gpio.vger.kernel.org\n"
	"\tactions = check\n"
	"[subsystem \"ext4\"]\n"
	"\tpaths = fs/ext4/\n"
	"\tactions = none\n"
	"[subsystem \"pwm\"]\n"
	"\tpaths = drivers/pwm/\n"
	"\tlist = linux-pwm@vger.kernel.org\n"
	"\tactions = reply\n"
	"\trisk-threshold = 0.30\n"
	"\tstable-threshold = 0.60\n"
	"\trate-limit = 1\n";

static struct {
	char dir[64];
	struct smtpsim plain, starttls, smtps;
	struct policy *pol;
	struct db *db;
	int ndb;
} E;

/* ---- helpers ------------------------------------------------------- */

static char *pathf(const char *fmt, ...)
{
	static char p[8][512];
	static int k;
	va_list ap;

	k = (k + 1) % 8;
	va_start(ap, fmt);
	vsnprintf(p[k], sizeof(p[k]), fmt, ap);
	va_end(ap);
	return p[k];
}

static int write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	int rc;

	if (!f)
		return -1;
	rc = fputs(text, f) < 0;
	rc |= fclose(f) != 0;
	return rc || chmod(path, mode) ? -1 : 0;
}

/* DIR/NAME.conf: the common part plus an [smtp] section. */
static int write_conf(const char *name, const char *smtp)
{
	struct buf b = BUF_INIT;
	int rc;

	rc = buf_addf(&b, conf_common, pwsim_data_dir(), E.dir);
	if (!rc)
		rc = buf_addf(&b, "[smtp]\n\ttimeout = 5\n%s", smtp);
	if (!rc)
		rc = write_file(pathf("%s/%s.conf", E.dir, name), b.ptr, 0600);
	buf_free(&b);
	return rc;
}

static void smtp_opts(struct smtp_opts *o, const char *name)
{
	struct config *cfg = NULL;

	assert_int_equal(config_open(&cfg, pathf("%s/%s.conf", E.dir, name)),
			 0);
	assert_int_equal(smtp_opts_from_config(o, cfg), 0);
	config_free(cfg);
}

static struct patch *load(const char *name)
{
	struct buf b = BUF_INIT;
	struct patch *p = NULL;

	assert_int_equal(pt_read_file(&b, pathf("%s/reply/%s",
						pwsim_data_dir(), name),
				      1 << 20),
			 0);
	assert_int_equal(patch_from_mail(&p, b.ptr, b.len), 0);
	buf_free(&b);
	return p;
}

static void replace(char **field, const char *value)
{
	free(*field);
	*field = strdup(value);
	assert_non_null(*field);
}

static const struct reply_reason reasons[] = {
	{ LONG_REASON, "raises" },
	{ "no Reviewed-by yet", "raises" },
};

static struct reply_in risk_in(double probability)
{
	struct reply_in in;

	memset(&in, 0, sizeof(in));
	in.kind = "risk";
	in.probability = probability;
	in.model_version = MODEL;
	in.reasons = reasons;
	in.nreasons = 2;
	in.review = "1 reply, no Reviewed-by";
	return in;
}

/* Header NAME unfolded (CRLF before WSP removed); *n: how many there are. */
static char *header(const char *msg, const char *name, int *n)
{
	struct buf v = BUF_INIT;
	size_t len = strlen(name);
	const char *p = msg, *e;
	int found = 0, in = 0;

	*n = 0;
	while (*p && strncmp(p, "\r\n", 2)) {
		e = strstr(p, "\r\n");
		if (!e)
			e = p + strlen(p);
		if (*p == ' ' || *p == '\t') {
			if (in)
				assert_int_equal(
					buf_add(&v, p, (size_t)(e - p)), 0);
		} else {
			in = 0;
			if (!strncasecmp(p, name, len) && p[len] == ':') {
				(*n)++;
				in = !found;
				found = 1;
				p += len + 1;
				while (*p == ' ')
					p++;
				if (in)
					assert_int_equal(
						buf_add(&v, p, (size_t)(e - p)),
						0);
			}
		}
		p = *e ? e + 2 : e;
	}
	if (!found) {
		buf_free(&v);
		return NULL;
	}
	return buf_detach(&v, NULL);
}

static void assert_header(const char *msg, const char *name,
			  const char *want)
{
	int n;
	char *v = header(msg, name, &n);

	assert_int_equal(n, 1);
	assert_non_null(v);
	assert_string_equal(v, want);
	free(v);
}

/* Sorted "to" addresses of an envelope, ", "-joined; *from: MAIL FROM. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *env_rcpts(const char *env, char **from)
{
	char *copy = strdup(env), *line, *save = NULL, *v[64];
	struct buf b = BUF_INIT;
	size_t n = 0, i;

	assert_non_null(copy);
	*from = NULL;
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "from ", 5))
			*from = strdup(line + 5);
		else if (!strncmp(line, "to ", 3) && n < 64)
			v[n++] = line + 3;
	}
	qsort(v, n, sizeof(*v), cmp_str);
	for (i = 0; i < n; i++)
		assert_int_equal(buf_addf(&b, "%s%s", i ? ", " : "", v[i]), 0);
	free(copy);
	return buf_detach(&b, NULL);
}

/* Characters of a valid UTF-8 line, or -1. */
static int utf8_chars(const unsigned char *s, size_t len)
{
	size_t i = 0, k;
	int n = 0;

	while (i < len) {
		unsigned c = s[i++];

		if (c < 0x80)
			k = 0;
		else if ((c & 0xE0) == 0xC0)
			k = 1;
		else if ((c & 0xF0) == 0xE0)
			k = 2;
		else if ((c & 0xF8) == 0xF0)
			k = 3;
		else
			return -1;
		for (; k; k--, i++)
			if (i >= len || (s[i] & 0xC0) != 0x80)
				return -1;
		n++;
	}
	return n;
}

/*
 * The body: CRLF line ends only, valid UTF-8, no line over 72 characters.
 * Returns it with all whitespace runs folded to one space, to look for
 * text the wrapper may have broken across lines.
 */
static char *check_body(const char *msg)
{
	const char *body = strstr(msg, "\r\n\r\n"), *p, *e;
	struct buf flat = BUF_INIT;
	int longest = 0, n, space = 0;

	assert_non_null(body);
	body += 4;
	for (p = body; *p; p = e + 2) {
		e = strstr(p, "\r\n");
		assert_non_null(e); /* the message ends with CRLF */
		assert_null(memchr(p, '\n', (size_t)(e - p)));
		assert_null(memchr(p, '\r', (size_t)(e - p)));
		n = utf8_chars((const unsigned char *)p, (size_t)(e - p));
		assert_true(n >= 0);
		assert_true(n <= 72);
		if (n > longest)
			longest = n;
	}
	/* filled at 72, not at some narrower width */
	assert_true(longest >= 66);
	for (p = body; *p; p++) {
		if (*p == ' ' || *p == '\r' || *p == '\n' || *p == '\t') {
			space = 1;
			continue;
		}
		if (space && flat.len)
			assert_int_equal(buf_addch(&flat, ' '), 0);
		space = 0;
		assert_int_equal(buf_addch(&flat, *p), 0);
	}
	return buf_detach(&flat, NULL);
}

/* <pt-KIND-HEX@DOMAIN>, computed here from its definition in reply.h. */
static char *expected_msgid(const char *msgid, const char *version,
			    const char *kind)
{
	struct buf in = BUF_INIT, out = BUF_INIT;
	unsigned char d[32];
	int i;

	assert_int_equal(buf_add(&in, msgid, strlen(msgid) + 1), 0);
	assert_int_equal(buf_add(&in, version, strlen(version) + 1), 0);
	assert_int_equal(buf_addstr(&in, kind), 0);
	assert_int_equal(gnutls_hash_fast(GNUTLS_DIG_SHA256, in.ptr, in.len,
					  d),
			 0);
	assert_int_equal(buf_addf(&out, "pt-%s-", kind), 0);
	for (i = 0; i < 12; i++)
		assert_int_equal(buf_addf(&out, "%02x", d[i]), 0);
	assert_int_equal(buf_addstr(&out, "@pt.example"), 0);
	buf_free(&in);
	return buf_detach(&out, NULL);
}

/* The outbox row's state and last_error for a dedupe key. */
static char *outbox_field(const char *key, const char *col)
{
	struct buf sql = BUF_INIT;
	sqlite3_stmt *st;
	char *r = NULL;

	assert_int_equal(buf_addf(&sql, "SELECT %s FROM outbox WHERE "
				  "dedupe_key = ?", col), 0);
	assert_int_equal(db_prepare(&st, E.db, sql.ptr), 0);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		r = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	buf_free(&sql);
	return r;
}

static long outbox_rows(void)
{
	sqlite3_stmt *st;
	long n = -1;

	assert_int_equal(db_prepare(&st, E.db, "SELECT count(*) FROM outbox"),
			 0);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static void one_message(const struct smtpsim *s, char **msg, char **env)
{
	assert_int_equal(smtpsim_count(s), 1);
	assert_int_equal(smtpsim_message(s, 0, msg, env), 0);
}

/*
 * Send p's reply through the plain sink; it must go out as the one
 * message the sink holds, returned in *msg and *env.
 */
static void sent_one(struct reply_out *out, const struct patch *p,
		     const struct reply_in *in, char **msg, char **env)
{
	struct smtp_opts o;
	int rc;

	smtp_opts(&o, "plain");
	rc = reply_for_patch(out, E.pol, &o, E.db, p, in, 0);
	smtp_opts_clear(&o);
	if (rc)
		fail_msg("reply_for_patch: %s", pt_error_last());
	assert_int_equal(out->status, REPLY_SENT);
	one_message(&E.plain, msg, env);
}

/* ---- setup --------------------------------------------------------- */

/* All three at once, then wait: python takes a while to come up. */
static int start_sinks(void)
{
	char cert[300], key[300], auth[64];
	int rc;

	snprintf(cert, sizeof(cert), "%s/ca-cert.pem", E.dir);
	snprintf(key, sizeof(key), "%s/ca-key.pem", E.dir);
	snprintf(auth, sizeof(auth), "bot:%s", PASSWORD);
	rc = smtpsim_spawn(&E.plain, "none", NULL, NULL, NULL, DEAD_ADDRESS);
	if (!rc)
		rc = smtpsim_spawn(&E.starttls, "starttls", cert, key, auth,
				   NULL);
	if (!rc)
		rc = smtpsim_spawn(&E.smtps, "smtps", cert, key, NULL, NULL);
	if (!rc)
		rc = smtpsim_wait(&E.plain);
	if (!rc)
		rc = smtpsim_wait(&E.starttls);
	if (!rc)
		rc = smtpsim_wait(&E.smtps);
	return rc;
}

static int write_confs(void)
{
	struct buf b = BUF_INIT;
	int rc;

	rc = buf_addf(&b, "\turl = %s\n\tstarttls = false\n", E.plain.url);
	if (!rc)
		rc = write_conf("plain", b.ptr);
	buf_reset(&b);
	if (!rc)
		rc = buf_addf(&b, "\turl = %s\n", E.plain.url);
	if (!rc)
		rc = write_conf("plain-needs-tls", b.ptr);
	/* one [smtp] per case: CA, credentials */
	{
		static const struct {
			const char *name, *ca, *pass;
		} c[] = {
			{ "starttls", "ca", "pass" },
			{ "starttls-wrong-ca", "other", "pass" },
			{ "starttls-wrong-pass", "ca", "wrong" },
		};
		size_t i;

		for (i = 0; !rc && i < sizeof(c) / sizeof(*c); i++) {
			buf_reset(&b);
			rc = buf_addf(&b, "\turl = %s\n"
				      "\tca-file = %s/%s-cert.pem\n"
				      "\tuser = bot\n\ttoken-file = %s/%s\n",
				      E.starttls.url, E.dir, c[i].ca, E.dir,
				      c[i].pass);
			if (!rc)
				rc = write_conf(c[i].name, b.ptr);
		}
	}
	buf_reset(&b);
	if (!rc)
		rc = buf_addf(&b, "\turl = %s\n\tca-file = %s/ca-cert.pem\n",
			      E.smtps.url, E.dir);
	if (!rc)
		rc = write_conf("smtps", b.ptr);
	buf_free(&b);
	return rc;
}

static int group_teardown(void **state);

static int group_setup(void **state)
{
	struct config *cfg = NULL;
	int rc;

	(void)state;
	strcpy(E.dir, "/tmp/pt-reply-XXXXXX");
	if (!mkdtemp(E.dir))
		return -1;
	if (smtpsim_make_cert(E.dir, "ca") || smtpsim_make_cert(E.dir, "other"))
		return -1;
	if (write_file(pathf("%s/MAINTAINERS", E.dir), maintainers, 0644) ||
	    write_file(pathf("%s/pass", E.dir), PASSWORD "\n", 0600) ||
	    write_file(pathf("%s/wrong", E.dir), WRONG_PASSWORD "\n", 0600))
		return -1;
	rc = start_sinks();
	if (rc == 77) {
		fprintf(stderr, "skip: no python3 or smtpsink.py\n");
		group_teardown(state);
		exit(77);
	}
	if (!rc)
		rc = write_confs();
	if (!rc)
		rc = config_open(&cfg, pathf("%s/plain.conf", E.dir));
	if (!rc)
		rc = policy_load(&E.pol, cfg);
	if (rc)
		fprintf(stderr, "setup: %s\n", pt_error_last());
	config_free(cfg);
	return rc ? -1 : 0;
}

static int group_teardown(void **state)
{
	char cmd[128];

	(void)state;
	policy_free(E.pol);
	/* all three at once: each takes a while to shut down */
	if (E.plain.pid > 0)
		kill(E.plain.pid, SIGTERM);
	if (E.starttls.pid > 0)
		kill(E.starttls.pid, SIGTERM);
	if (E.smtps.pid > 0)
		kill(E.smtps.pid, SIGTERM);
	smtpsim_stop(&E.plain);
	smtpsim_stop(&E.starttls);
	smtpsim_stop(&E.smtps);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", E.dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Each test: a fresh state database and empty sinks. */
static int setup(void **state)
{
	(void)state;
	smtpsim_clear(&E.plain);
	smtpsim_clear(&E.starttls);
	smtpsim_clear(&E.smtps);
	return db_open(&E.db, pathf("%s/state-%d.db", E.dir, ++E.ndb));
}

static int teardown(void **state)
{
	(void)state;
	db_close(E.db);
	E.db = NULL;
	return 0;
}

/* ---- 1. the reply as it arrives ------------------------------------- */

static void test_reply_arrives_threaded(void **state)
{
	struct patch *p = load("acme-v2-2.eml"), *got = NULL;
	struct reply_in in = risk_in(0.42);
	struct reply_out out;
	struct buf id = BUF_INIT;
	char *msg, *env, *from, *rcpts, *flat, *want_id, *v;
	int n;

	(void)state;
	sent_one(&out, p, &in, &msg, &env);
	assert_string_equal(out.subsystem, "acme");

	/* the Message-ID from (patch, model version, kind), nothing else */
	want_id = expected_msgid(PATCH_ID, MODEL, "risk");
	assert_int_equal(reply_message_id(&id, PATCH_ID, MODEL, "risk",
					  "pt.example"), 0);
	assert_string_equal(id.ptr, want_id);
	assert_string_equal(out.message_id, want_id);
	buf_reset(&id);
	assert_int_equal(buf_addf(&id, "<%s>", want_id), 0);
	assert_header(msg, "Message-ID", id.ptr);

	/* threading, exactly */
	assert_header(msg, "Subject", "Re: [PATCH net v2 2/3] net: acme: fall "
				      "back to ETH_DATA_LEN on a zero MTU");
	assert_header(msg, "In-Reply-To", "<" PATCH_ID ">");
	assert_header(msg, "References",
		      "<20261110-acme-v1-0-rene@example.de> "
		      "<20261112-acme-v2-0-rene@example.de> <" PATCH_ID ">");
	assert_header(msg, "Auto-Submitted", "auto-generated");
	assert_header(msg, "X-Patchwork-Hint", "ignore");
	assert_header(msg, "From", FROM);
	assert_header(msg, "MIME-Version", "1.0");
	assert_header(msg, "Content-Type", "text/plain; charset=UTF-8");
	assert_header(msg, "Content-Transfer-Encoding", "8bit");
	assert_null(header(msg, "Bcc", &n));
	assert_int_equal(n, 0);

	/* To: the author (name encoded); Cc: the list and MAINTAINERS */
	v = header(msg, "To", &n);
	assert_int_equal(n, 1);
	assert_non_null(strstr(v, "=?UTF-8?B?"));
	assert_non_null(strstr(v, " <rene.mueller@example.de>"));
	free(v);
	assert_header(msg, "Cc", "netdev@vger.kernel.org, alice@maint.example, "
				 "bob@rev.example, dave@net.example");

	/* the envelope: From's address; author + list + maintainers, no
	 * THE REST, nobody twice */
	rcpts = env_rcpts(env, &from);
	assert_string_equal(from, "bot@pt.example");
	assert_string_equal(rcpts, "alice@maint.example, bob@rev.example, "
				   "dave@net.example, netdev@vger.kernel.org, "
				   "rene.mueller@example.de");

	/* the body: plain UTF-8 text wrapped at 72 */
	flat = check_body(msg);
	assert_non_null(strstr(flat, "Hi René,"));
	assert_non_null(strstr(flat, "1. " LONG_REASON " (raises)"));
	assert_non_null(strstr(flat, "estimates a 42% chance"));
	assert_non_null(strstr(flat, "threshold for this note is 30%"));
	assert_non_null(strstr(flat, "Review so far: 1 reply, no "
				     "Reviewed-by."));
	assert_non_null(strstr(flat, "write to netdev-maintainers@pt.example"));
	assert_non_null(strstr(msg, "\r\n-- \r\npatchtriage " PT_VERSION
				    ", model " MODEL "\r\n"));

	/* and a mail reader sees the same thread */
	assert_int_equal(patch_from_mail(&got, msg, strlen(msg)), 0);
	assert_string_equal(got->subject.raw, "Re: [PATCH net v2 2/3] net: "
			    "acme: fall back to ETH_DATA_LEN on a zero MTU");
	assert_int_equal(got->subject.reply_depth, 1);
	assert_string_equal(got->in_reply_to, PATCH_ID);
	assert_int_equal(got->nreferences, 3);
	assert_string_equal(got->references[2], PATCH_ID);
	assert_string_equal(got->author.name, "patchtriage");
	assert_string_equal(got->author.email, "bot@pt.example");

	patch_free(got);
	free(flat);
	free(rcpts);
	free(from);
	free(want_id);
	free(msg);
	free(env);
	buf_free(&id);
	reply_out_clear(&out);
	patch_free(p);
}

/* ---- 2. never twice -------------------------------------------------- */

static void test_not_sent_twice(void **state)
{
	struct patch *p = load("acme-v2-2.eml");
	struct reply_in in = risk_in(0.42);
	struct reply_out out;
	struct smtp_opts o;
	char *first = NULL, *st;

	(void)state;
	smtp_opts(&o, "plain");
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0), 0);
	assert_int_equal(out.status, REPLY_SENT);
	first = strdup(out.message_id);
	reply_out_clear(&out);

	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0), 0);
	assert_int_equal(out.status, REPLY_ALREADY);
	assert_string_equal(out.message_id, first);
	reply_out_clear(&out);
	/* a dry run says so too */
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 1), 0);
	assert_int_equal(out.status, REPLY_ALREADY);
	reply_out_clear(&out);
	/* another probability is the same reply (patch, model, kind) */
	in.probability = 0.9;
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0), 0);
	assert_int_equal(out.status, REPLY_ALREADY);
	reply_out_clear(&out);

	assert_int_equal(smtpsim_count(&E.plain), 1);
	st = outbox_field(first, "state");
	assert_string_equal(st, "sent");
	free(st);
	free(first);
	smtp_opts_clear(&o);
	patch_free(p);
}

/*
 * A row as a crash at some point leaves it, written here directly (the
 * tests below kill a real sender too): what a restart does with it.
 */
static void crash_left(enum outbox_state state, struct reply_out *out,
		       struct patch *p, struct reply_in *in)
{
	const struct policy_subsys *s = NULL;
	struct reply_out built;
	int64_t id = 0;

	assert_int_equal(policy_match(E.pol, p, NULL, &s), 0);
	assert_int_equal(reply_build(&built, E.pol, s, p, in), 0);
	assert_int_equal(store_outbox_intend(E.db, "reply-risk",
					     built.message_id, s->name,
					     "rene.mueller@example.de, "
					     "netdev@vger.kernel.org",
					     built.message, &id), 0);
	if (state != OUTBOX_INTENDED)
		assert_int_equal(store_outbox_set(E.db, id, state, NULL, NULL),
				 0);
	*out = built;
}

static void test_sending_row_not_resent(void **state)
{
	struct patch *p = load("acme-v2-2.eml");
	struct reply_in in = risk_in(0.42);
	struct reply_out built, out;
	struct smtp_opts o;
	char *st;

	(void)state;
	smtp_opts(&o, "plain");
	crash_left(OUTBOX_SENDING, &built, p, &in);
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0), 0);
	assert_int_equal(out.status, REPLY_ALREADY);
	reply_out_clear(&out);
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0), 0);
	assert_int_equal(out.status, REPLY_ALREADY);
	assert_int_equal(smtpsim_count(&E.plain), 0);
	st = outbox_field(built.message_id, "state");
	assert_string_equal(st, "sending");
	free(st);
	reply_out_clear(&out);
	reply_out_clear(&built);
	smtp_opts_clear(&o);
	patch_free(p);
}

static void test_intended_row_sent_once(void **state)
{
	struct patch *p = load("acme-v2-2.eml");
	struct reply_in in = risk_in(0.42);
	struct reply_out built, out;
	struct smtp_opts o;
	char *msg, *env, *st, *v;
	int n;

	(void)state;
	smtp_opts(&o, "plain");
	crash_left(OUTBOX_INTENDED, &built, p, &in);
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0), 0);
	assert_int_equal(out.status, REPLY_SENT);
	reply_out_clear(&out);
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0), 0);
	assert_int_equal(out.status, REPLY_ALREADY);
	reply_out_clear(&out);

	/* exactly the recorded message went out, once */
	one_message(&E.plain, &msg, &env);
	v = header(msg, "Message-ID", &n);
	assert_int_equal(n, 1);
	assert_non_null(strstr(v, built.message_id));
	assert_string_equal(msg, built.message);
	st = outbox_field(built.message_id, "state");
	assert_string_equal(st, "sent");
	free(st);
	free(v);
	free(msg);
	free(env);
	reply_out_clear(&built);
	smtp_opts_clear(&o);
	patch_free(p);
}

/*
 * A real crash: a child process sends the reply to a server played here
 * (on a socket of this process) and is killed with SIGKILL at a chosen
 * point of the dialogue.  Killed before the server took DATA, nothing
 * can have been delivered: the row stays 'intended' and the restart
 * sends it once.  Killed after, the row says 'sending' and neither
 * reply_for_patch nor reply_resend sends it again.
 */
enum kill_at { KILL_BEFORE_GREETING, KILL_AFTER_DATA };

static char *row_state(void)
{
	char *id = expected_msgid(PATCH_ID, MODEL, "risk");
	char *st = outbox_field(id, "state");

	free(id);
	return st;
}

/* Answer SMTP commands until DATA is accepted; 0 when it was. */
static int play_server_to_data(int fd)
{
	char line[1024];
	FILE *in = fdopen(dup(fd), "r");
	int rc = -1;

	if (!in)
		return -1;
	if (write(fd, "220 sim ESMTP\r\n", 15) != 15)
		goto out;
	while (fgets(line, sizeof(line), in)) {
		const char *answer = "250 ok\r\n";

		if (!strncasecmp(line, "DATA", 4))
			answer = "354 go ahead\r\n";
		if (write(fd, answer, strlen(answer)) < (ssize_t)strlen(answer))
			break;
		if (!strncasecmp(line, "DATA", 4)) {
			rc = 0;
			break;
		}
	}
out:
	fclose(in);
	return rc;
}

static void kill_sender(enum kill_at at, char **state_after)
{
	struct patch *p = load("acme-v2-2.eml");
	struct reply_in in = risk_in(0.42);
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	struct reply_out out;
	struct smtp_opts o;
	struct pollfd pfd;
	char *st = NULL;
	pid_t pid;
	int lfd, fd, i, status;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(lfd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);

	smtp_opts(&o, "plain");
	free(o.url);
	o.url = strdup(pathf("smtp://127.0.0.1:%d", ntohs(sa.sin_port)));
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct db *cdb = NULL;

		close(lfd);
		if (db_open(&cdb, pathf("%s/state-%d.db", E.dir, E.ndb)))
			_exit(2);
		reply_for_patch(&out, E.pol, &o, cdb, p, &in, 0);
		_exit(3); /* not reached: the server never finishes */
	}
	pfd.fd = lfd;
	pfd.events = POLLIN;
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	fd = accept(lfd, NULL, NULL);
	assert_true(fd >= 0);
	if (at == KILL_AFTER_DATA) {
		assert_int_equal(play_server_to_data(fd), 0);
		/* the client marks 'sending' as it starts the message */
		for (i = 0; i < 250; i++) {
			struct timespec ts = { 0, 20 * 1000 * 1000 };

			free(st);
			st = row_state();
			if (st && !strcmp(st, "sending"))
				break;
			nanosleep(&ts, NULL);
		}
		free(st);
	}
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	close(fd);
	close(lfd);
	*state_after = row_state();
	smtp_opts_clear(&o);
	patch_free(p);
}

static void test_killed_before_data_sent_once(void **state)
{
	struct patch *p = load("acme-v2-2.eml");
	struct reply_in in = risk_in(0.42);
	struct reply_out out;
	struct smtp_opts o;
	char *st;

	(void)state;
	kill_sender(KILL_BEFORE_GREETING, &st);
	assert_non_null(st);
	assert_string_equal(st, "intended");
	free(st);

	smtp_opts(&o, "plain");
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0), 0);
	assert_int_equal(out.status, REPLY_SENT);
	reply_out_clear(&out);
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0), 0);
	assert_int_equal(out.status, REPLY_ALREADY);
	reply_out_clear(&out);
	assert_int_equal(smtpsim_count(&E.plain), 1);
	st = row_state();
	assert_string_equal(st, "sent");
	free(st);
	smtp_opts_clear(&o);
	patch_free(p);
}

static void test_killed_after_data_not_resent(void **state)
{
	struct patch *p = load("acme-v2-2.eml");
	struct reply_in in = risk_in(0.42);
	struct outbox_row row;
	struct reply_out out;
	struct smtp_opts o;
	char *st;

	(void)state;
	kill_sender(KILL_AFTER_DATA, &st);
	assert_non_null(st);
	assert_string_equal(st, "sending");
	free(st);

	smtp_opts(&o, "plain");
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0), 0);
	assert_int_equal(out.status, REPLY_ALREADY);
	assert_int_equal(store_outbox_get(E.db, out.message_id, &row), 0);
	assert_int_equal(reply_resend(E.pol, &o, E.db, &row), PT_EINVAL);
	assert_int_equal(smtpsim_count(&E.plain), 0);
	st = row_state();
	assert_string_equal(st, "sending");
	free(st);
	outbox_row_clear(&row);
	reply_out_clear(&out);
	smtp_opts_clear(&o);
	patch_free(p);
}

struct resend_ctx {
	const struct smtp_opts *o;
	int n, rc;
};

/* The outbox row's last_error for dedupe key key ("" for none). */
static const char *outbox_error(const char *key)
{
	static char err[512];
	sqlite3_stmt *st;

	err[0] = '\0';
	assert_int_equal(db_prepare(&st, E.db, "SELECT last_error FROM"
				    " outbox WHERE dedupe_key = ?"), 0);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(err, sizeof(err), "%s",
			 (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return err;
}

static int resend_cb(const struct outbox_row *r, void *ctx)
{
	struct resend_ctx *c = ctx;

	c->n++;
	c->rc = reply_resend(E.pol, c->o, E.db, r);
	return 0;
}

/*
 * The server was down (nothing handed over): the row stays 'intended'
 * with the message and recipients, and the start-up pass
 * (reply_resend over the intended rows) sends it once, to the same
 * envelope recipients.
 */
static void test_server_down_then_resent_once(void **state)
{
	struct patch *p = load("acme-v2-2.eml");
	struct reply_in in = risk_in(0.42);
	struct resend_ctx c = { NULL, 0, 0 };
	struct reply_out out;
	struct smtp_opts down, o;
	char *msg, *env, *from, *rcpts, *st, *id;

	(void)state;
	smtp_opts(&down, "plain");
	free(down.url);
	/* nothing listens on port 1 of loopback: connection refused */
	down.url = strdup("smtp://127.0.0.1:1");
	assert_int_equal(reply_for_patch(&out, E.pol, &down, E.db, p, &in, 0),
			 PT_EAGAIN);
	reply_out_clear(&out);
	id = expected_msgid(PATCH_ID, MODEL, "risk");
	st = outbox_field(id, "state");
	assert_string_equal(st, "intended");
	free(st);

	smtp_opts(&o, "plain");
	c.o = &o;
	assert_int_equal(store_outbox_foreach(E.db, OUTBOX_INTENDED, resend_cb,
					      &c), 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.rc, 0);
	c.n = 0;
	assert_int_equal(store_outbox_foreach(E.db, OUTBOX_INTENDED, resend_cb,
					      &c), 0);
	assert_int_equal(c.n, 0);
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0), 0);
	assert_int_equal(out.status, REPLY_ALREADY);
	reply_out_clear(&out);

	one_message(&E.plain, &msg, &env);
	rcpts = env_rcpts(env, &from);
	assert_string_equal(from, "bot@pt.example");
	assert_string_equal(rcpts, "alice@maint.example, bob@rev.example, "
				   "dave@net.example, netdev@vger.kernel.org, "
				   "rene.mueller@example.de");
	st = outbox_field(id, "state");
	assert_string_equal(st, "sent");
	free(st);
	free(rcpts);
	free(from);
	free(msg);
	free(env);
	free(id);
	smtp_opts_clear(&down);
	smtp_opts_clear(&o);
	patch_free(p);
}

/* ---- 3. header injection -------------------------------------------- */

static void refused(struct patch *p, const char *header_name)
{
	struct reply_in in = risk_in(0.42);
	struct reply_out out;
	struct smtp_opts o;
	char want[64];

	smtp_opts(&o, "plain");
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0),
			 PT_EINVAL);
	snprintf(want, sizeof(want), "header '%s'", header_name);
	assert_non_null(strstr(pt_error_last(), want));
	/* the error line itself cannot be split either */
	assert_null(strpbrk(pt_error_last(), "\r\n"));
	assert_null(out.message);
	reply_out_clear(&out);
	smtp_opts_clear(&o);
	assert_int_equal(smtpsim_count(&E.plain), 0);
	assert_int_equal(outbox_rows(), 0);
}

static void test_hostile_headers_refused(void **state)
{
	static const char *const evil[] = {
		"foo\r\nBcc: evil@x", "foo\nBcc: evil@x", "foo\rBcc: evil@x",
	};
	struct patch *p;
	char *saved;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(evil) / sizeof(*evil); i++) {
		p = load("acme-v2-2.eml");
		replace(&p->subject.raw, evil[i]);
		refused(p, "Subject");
		patch_free(p);

		p = load("acme-v2-2.eml");
		replace(&p->author.name, evil[i]);
		refused(p, "To");
		patch_free(p);
	}
	p = load("acme-v2-2.eml");
	replace(&p->author.email, "rene@example.de\r\nBcc: evil@x");
	refused(p, "To");
	patch_free(p);

	p = load("acme-v2-2.eml");
	replace(&p->references[0], "a@b>\r\nBcc: <evil@x");
	refused(p, "References");
	patch_free(p);

	p = load("acme-v2-2.eml");
	replace(&p->message_id, "a@b>\r\nBcc: <evil@x");
	refused(p, "In-Reply-To");
	patch_free(p);

	/* values from the configuration are checked as well */
	p = load("acme-v2-2.eml");
	E.pol->msgid_domain = "pt.example>\r\nBcc: <evil@x";
	refused(p, "Message-ID");
	E.pol->msgid_domain = NULL;
	saved = E.pol->from;
	E.pol->from = "patchtriage <bot@pt.example>\r\nBcc: evil@x";
	refused(p, "From");
	E.pol->from = saved;
	patch_free(p);
}

/*
 * Through the mail parser the same attack arrives as encoded words that
 * decode to CR LF: whatever the reply then carries, it is one Subject
 * and no Bcc, and evil@x is no recipient.
 */
static void test_hostile_mail_injects_nothing(void **state)
{
	struct patch *p = load("hostile.eml");
	struct reply_in in = risk_in(0.42);
	struct reply_out out;
	struct smtp_opts o;
	char *msg, *env, *from, *rcpts, *v;
	int rc, n;

	(void)state;
	smtp_opts(&o, "plain");
	rc = reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0);
	if (rc) { /* refused: then nothing went out */
		assert_int_equal(rc, PT_EINVAL);
		assert_int_equal(smtpsim_count(&E.plain), 0);
		goto out;
	}
	assert_int_equal(out.status, REPLY_SENT);
	one_message(&E.plain, &msg, &env);
	v = header(msg, "Subject", &n);
	assert_int_equal(n, 1);
	free(v);
	assert_null(header(msg, "Bcc", &n));
	assert_int_equal(n, 0);
	rcpts = env_rcpts(env, &from);
	assert_null(strstr(rcpts, "evil"));
	free(rcpts);
	free(from);
	free(msg);
	free(env);
out:
	reply_out_clear(&out);
	smtp_opts_clear(&o);
	patch_free(p);
}

/* ---- 4. policy -------------------------------------------------------- */

static void expect_status(const char *eml, const char *kind, double prob,
			  enum reply_status want)
{
	struct patch *p = load(eml);
	struct reply_in in = risk_in(prob);
	struct reply_out out;
	struct smtp_opts o;

	in.kind = kind;
	smtp_opts(&o, "plain");
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0), 0);
	if (out.status != want)
		fail_msg("%s %s: %s, wanted %s", eml, kind,
			 reply_status_name(out.status),
			 reply_status_name(want));
	reply_out_clear(&out);
	smtp_opts_clear(&o);
	patch_free(p);
}

static void test_policy_opt_in_action_threshold(void **state)
{
	(void)state;
	/* no section covers fs/xfs; ext4's section has no actions */
	expect_status("xfs.eml", "risk", 0.99, REPLY_NOT_OPTED_IN);
	expect_status("ext4.eml", "risk", 0.99, REPLY_NOT_OPTED_IN);
	/* gpio opted in for checks only */
	expect_status("gpio.eml", "risk", 0.99, REPLY_ACTION_OFF);
	/* under acme's 30% */
	expect_status("acme-v2-2.eml", "risk", 0.29, REPLY_BELOW_THRESHOLD);
	assert_int_equal(smtpsim_count(&E.plain), 0);
	assert_int_equal(outbox_rows(), 0);
}

static void test_policy_rate_limit(void **state)
{
	struct outbox_row row;
	struct buf id = BUF_INIT;
	char *msg, *env, *from, *rcpts;

	(void)state;
	expect_status("pwm-1.eml", "risk", 0.5, REPLY_SENT);
	expect_status("pwm-2.eml", "risk", 0.5, REPLY_RATE_LIMITED);
	/* the limit is per kind */
	expect_status("pwm-2.eml", "stable", 0.7, REPLY_SENT);
	expect_status("pwm-1.eml", "stable", 0.7, REPLY_RATE_LIMITED);
	assert_int_equal(smtpsim_count(&E.plain), 2);

	/* a limited reply is not recorded: it can go out next hour */
	assert_int_equal(reply_message_id(&id, "20261113-pwm-2@example.org",
					  MODEL, "risk", "pt.example"), 0);
	assert_int_equal(store_outbox_get(E.db, id.ptr, &row), PT_ENOTFOUND);
	pt_error_clear();

	/* the default recipients: author and list */
	assert_int_equal(smtpsim_message(&E.plain, 0, &msg, &env), 0);
	rcpts = env_rcpts(env, &from);
	assert_string_equal(rcpts, "linux-pwm@vger.kernel.org, "
				   "paul@example.org");
	free(rcpts);
	free(from);
	free(msg);
	free(env);
	buf_free(&id);
}

static void test_dry_run_sends_nothing(void **state)
{
	struct patch *p = load("acme-v2-2.eml");
	struct reply_in in = risk_in(0.42);
	struct reply_out out;
	struct smtp_opts o;

	(void)state;
	smtp_opts(&o, "plain");
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 1), 0);
	assert_int_equal(out.status, REPLY_DRY_RUN);
	assert_non_null(strstr(out.message,
			       "\r\nX-Patchwork-Hint: ignore\r\n"));
	reply_out_clear(&out);
	assert_int_equal(smtpsim_count(&E.plain), 0);
	assert_int_equal(outbox_rows(), 0);
	smtp_opts_clear(&o);
	patch_free(p);
}

/* Author and subject reach the body too: no bare CR or LF gets there. */
static void test_body_has_no_bare_cr(void **state)
{
	static char *list_only[] = { "list", NULL };
	struct patch *p = load("acme-v2-2.eml");
	struct reply_in in = risk_in(0.42);
	const struct policy_subsys *s = NULL;
	struct reply_out out;
	char **saved, *msg, *env, *flat;

	(void)state;
	/* the author is no recipient, so the name is in no header */
	assert_int_equal(policy_match(E.pol, p, NULL, &s), 0);
	saved = s->recipients;
	((struct policy_subsys *)s)->recipients = list_only;
	replace(&p->author.name, "Eve\rX\r\nBcc: evil@x");
	replace(&p->subject.clean, "net: acme: foo\r\nbar\rbaz");
	sent_one(&out, p, &in, &msg, &env);
	((struct policy_subsys *)s)->recipients = saved;
	flat = check_body(msg);
	assert_non_null(strstr(flat, "foo bar baz"));
	free(flat);
	free(msg);
	free(env);
	reply_out_clear(&out);
	patch_free(p);
}

/*
 * Header lines stay within RFC 5322's limits however long the value: a
 * long subject is folded at spaces, a word too long for a line and a
 * long display name go into encoded words; a reader gets them back.
 */
static void long_header_case(const char *subject, const char *name)
{
	struct patch *p = load("acme-v2-2.eml"), *got = NULL;
	struct reply_in in = risk_in(0.42);
	struct reply_out out;
	struct buf want = BUF_INIT;
	const char *l, *e;
	char *msg, *env;

	if (subject)
		replace(&p->subject.raw, subject);
	if (name)
		replace(&p->author.name, name);
	sent_one(&out, p, &in, &msg, &env);
	for (l = msg; strncmp(l, "\r\n", 2); l = e + 2) {
		e = strstr(l, "\r\n");
		assert_non_null(e);
		if (e - l > 78)
			fail_msg("header line of %d bytes: %.40s...",
				 (int)(e - l), l);
	}
	assert_int_equal(patch_from_mail(&got, msg, strlen(msg)), 0);
	assert_int_equal(buf_addf(&want, "Re: %s", p->subject.raw), 0);
	assert_string_equal(got->subject.raw, want.ptr);
	assert_string_equal(got->in_reply_to, PATCH_ID);
	if (name) {
		int n;
		char *to = header(msg, "To", &n);

		assert_non_null(strstr(to, "<rene.mueller@example.de>"));
		free(to);
	}
	smtpsim_clear(&E.plain);
	patch_free(got);
	buf_free(&want);
	free(msg);
	free(env);
	reply_out_clear(&out);
	patch_free(p);
	db_close(E.db);
	assert_int_equal(db_open(&E.db, pathf("%s/state-%d.db", E.dir,
					       ++E.ndb)), 0);
}

static void test_long_headers_folded(void **state)
{
	struct buf words = BUF_INIT, token = BUF_INIT, name = BUF_INIT;
	int i;

	(void)state;
	assert_int_equal(buf_addstr(&words, "[PATCH net] net: acme:"), 0);
	for (i = 0; i < 150; i++)
		assert_int_equal(buf_addf(&words, " word%d", i), 0);
	assert_int_equal(buf_addstr(&token, "[PATCH] "), 0);
	for (i = 0; i < 1100; i++)
		assert_int_equal(buf_addch(&token, 'a' + i % 26), 0);
	for (i = 0; i < 120; i++)
		assert_int_equal(
			buf_addstr(&name, i % 2 ? "Müller " : "Smith, "), 0);
	buf_rtrim(&name);
	long_header_case(words.ptr, NULL);
	long_header_case(token.ptr, NULL);
	long_header_case(NULL, name.ptr);
	long_header_case("[PATCH net] net: acme: é" /* short, non-ASCII */,
			 NULL);
	buf_free(&words);
	buf_free(&token);
	buf_free(&name);
}

/* Fixes: with an ordinary Cc: still lacks the stable tag. */
static void test_stable_note_only_without_cc_stable(void **state)
{
	char *msg, *env, *flat;

	(void)state;
	expect_status("pwm-fix-stable.eml", "stable", 0.9,
		      REPLY_BELOW_THRESHOLD);
	assert_int_equal(smtpsim_count(&E.plain), 0);
	expect_status("pwm-fix-cc.eml", "stable", 0.9, REPLY_SENT);
	one_message(&E.plain, &msg, &env);
	flat = check_body(msg);
	assert_non_null(strstr(flat, "no \"Cc: stable@vger.kernel.org\" "
				     "tag."));
	assert_non_null(strstr(flat, "a 90% chance of being backported"));
	free(flat);
	free(msg);
	free(env);
}

/*
 * A relay that refuses one recipient (a maintainer who left) must not
 * stop the reply to everyone else.
 */
static void test_refused_recipient_others_get_it(void **state)
{
	static char *with_dead[] = { "author", "list", DEAD_ADDRESS, NULL };
	struct patch *p = load("acme-v2-2.eml");
	struct reply_in in = risk_in(0.42);
	const struct policy_subsys *s = NULL;
	struct reply_out out;
	char **saved, *msg, *env, *from, *rcpts;

	(void)state;
	assert_int_equal(policy_match(E.pol, p, NULL, &s), 0);
	saved = s->recipients;
	((struct policy_subsys *)s)->recipients = with_dead;
	sent_one(&out, p, &in, &msg, &env);
	((struct policy_subsys *)s)->recipients = saved;
	rcpts = env_rcpts(env, &from);
	assert_string_equal(rcpts, "netdev@vger.kernel.org, "
				   "rene.mueller@example.de");
	/* the refusal is kept, with the server's answer, not dropped */
	assert_non_null(out.refused);
	assert_non_null(strstr(out.refused, "'" DEAD_ADDRESS "' (550"));
	assert_string_equal(outbox_error(out.message_id),
			    "sent; recipients refused: " "'" DEAD_ADDRESS
			    "' (550 5.1.1 <" DEAD_ADDRESS ">: mailbox "
			    "unavailable)");
	free(rcpts);
	free(from);
	free(msg);
	free(env);
	reply_out_clear(&out);
	patch_free(p);
}

/* Without a Fixes: tag the note shows the one blame suggested, if any. */
static void test_stable_note_suggests_fixes(void **state)
{
	struct patch *p = load("pwm-1.eml");
	struct reply_in in = risk_in(0.7);
	struct reply_out out;
	char *msg, *env, *flat;

	(void)state;
	in.kind = "stable";
	in.suggested_fixes = "Fixes: 0123456789ab (\"pwm: acme: add the "
			     "driver\")";
	sent_one(&out, p, &in, &msg, &env);
	assert_non_null(strstr(msg, "\r\n  Cc: stable@vger.kernel.org\r\n"
				    "  Fixes: 0123456789ab (\"pwm: acme: add "
				    "the driver\")\r\n\r\n"));
	assert_null(strstr(msg, "<sha1>"));
	flat = check_body(msg);
	assert_non_null(strstr(flat, "tag and no Fixes: tag."));
	assert_non_null(strstr(flat, "(git blame); please check it."));
	free(flat);
	free(msg);
	free(env);
	reply_out_clear(&out);
	patch_free(p);
}

/*
 * smtp_send itself: lines that start with a dot (curl stuffs them, the
 * server unstuffs) and 8-bit text arrive byte for byte; a lone "." in
 * the body does not end the message early.
 */
static void test_smtp_send_dot_lines_intact(void **state)
{
	static const char msg_text[] =
		"From: bot@pt.example\r\n"
		"To: a@pt.example\r\n"
		"Subject: dots\r\n"
		"\r\n"
		".\r\n"
		"..\r\n"
		".leading dot\r\n"
		"caf\xc3\xa9 \xe2\x80\x94 8-bit\r\n"
		".\r\n"
		"last line\r\n";
	static char *rcpts[] = { "a@pt.example", "b@pt.example", NULL };
	struct smtp_opts o;
	char *msg, *env, *from, *to;

	(void)state;
	smtp_opts(&o, "plain");
	assert_int_equal(smtp_send(&o, "bot@pt.example", rcpts, msg_text,
				   strlen(msg_text)), 0);
	one_message(&E.plain, &msg, &env);
	assert_string_equal(msg, msg_text);
	to = env_rcpts(env, &from);
	assert_string_equal(from, "bot@pt.example");
	assert_string_equal(to, "a@pt.example, b@pt.example");
	free(to);
	free(from);
	free(msg);
	free(env);
	smtp_opts_clear(&o);
}

/* What smtp.* settings are refused before anything connects. */
static void test_smtp_config_errors(void **state)
{
	static const struct {
		const char *smtp, *want;
	} c[] = {
		{ "\ttimeout = 5\n", "smtp.url is not set" },
		{ "\turl = http://127.0.0.1:25\n",
		  "is not smtp:// or smtps://" },
		{ "\turl = smtp://127.0.0.1:25\n\tuser = bot\n",
		  "no smtp.token-file or smtp.password-command" },
		{ "\turl = smtp://127.0.0.1:25\n\tuser = bot\n"
		  "\tstarttls = false\n",
		  "the password would cross the network in clear" },
	};
	struct config *cfg = NULL;
	struct smtp_opts o;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(*c); i++) {
		assert_int_equal(write_conf("bad", c[i].smtp), 0);
		assert_int_equal(config_open(&cfg, pathf("%s/bad.conf",
							 E.dir)), 0);
		assert_int_equal(smtp_opts_from_config(&o, cfg), PT_EINVAL);
		if (!strstr(pt_error_last(), c[i].want))
			fail_msg("'%s' for case %zu", pt_error_last(), i);
		assert_null(o.url);
		config_free(cfg);
	}
}

/* ---- 5. TLS and AUTH -------------------------------------------------- */

static int send_with(const char *conf, struct reply_out *out)
{
	struct patch *p = load("acme-v2-2.eml");
	struct reply_in in = risk_in(0.42);
	struct smtp_opts o;
	int rc;

	smtp_opts(&o, conf);
	rc = reply_for_patch(out, E.pol, &o, E.db, p, &in, 0);
	smtp_opts_clear(&o);
	patch_free(p);
	return rc;
}

static void test_starttls_verified_and_auth(void **state)
{
	struct reply_out out;
	char *msg, *env, *err, *st, *id;

	(void)state;
	/* a certificate from another CA: refused before anything is sent */
	assert_int_equal(send_with("starttls-wrong-ca", &out), PT_EAGAIN);
	err = strdup(pt_error_last());
	assert_non_null(strstr(err, E.starttls.url));
	assert_non_null(strcasestr(err, "certificate"));
	assert_int_equal(smtpsim_count(&E.starttls), 0);
	free(err);
	reply_out_clear(&out);

	/* a wrong password: PT_EAUTH, and the password is in no message */
	assert_int_equal(send_with("starttls-wrong-pass", &out), PT_EAUTH);
	assert_non_null(strstr(pt_error_last(), E.starttls.url));
	assert_null(strstr(pt_error_last(), WRONG_PASSWORD));
	assert_null(strstr(pt_error_last(), PASSWORD));
	assert_int_equal(smtpsim_count(&E.starttls), 0);
	reply_out_clear(&out);

	/* both left the reply to be sent: with the right CA and password
	 * it goes out once, authenticated */
	assert_int_equal(send_with("starttls", &out), 0);
	assert_int_equal(out.status, REPLY_SENT);
	id = strdup(out.message_id);
	reply_out_clear(&out);
	err = outbox_field(id, "coalesce(last_error, '')");
	assert_null(strstr(err, WRONG_PASSWORD));
	st = outbox_field(id, "state");
	assert_string_equal(st, "sent");
	one_message(&E.starttls, &msg, &env);
	assert_non_null(strstr(env, "\nauth "));
	assert_null(strstr(env, "\nauth False"));
	assert_int_equal(send_with("starttls", &out), 0);
	assert_int_equal(out.status, REPLY_ALREADY);
	assert_int_equal(smtpsim_count(&E.starttls), 1);
	reply_out_clear(&out);
	free(st);
	free(err);
	free(id);
	free(msg);
	free(env);
}

static void test_starttls_required(void **state)
{
	struct reply_out out;

	(void)state;
	/* smtp:// to a server without STARTTLS: not sent in clear text */
	assert_int_equal(send_with("plain-needs-tls", &out), PT_EAGAIN);
	assert_non_null(strstr(pt_error_last(), E.plain.url));
	assert_int_equal(smtpsim_count(&E.plain), 0);
	reply_out_clear(&out);
}

static void test_smtps_verified(void **state)
{
	struct reply_out out;
	char *msg, *env;

	(void)state;
	assert_int_equal(send_with("smtps", &out), 0);
	assert_int_equal(out.status, REPLY_SENT);
	one_message(&E.smtps, &msg, &env);
	assert_header(msg, "In-Reply-To", "<" PATCH_ID ">");
	free(msg);
	free(env);
	reply_out_clear(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_reply_arrives_threaded),
		T(test_not_sent_twice),
		T(test_sending_row_not_resent),
		T(test_intended_row_sent_once),
		T(test_killed_before_data_sent_once),
		T(test_killed_after_data_not_resent),
		T(test_server_down_then_resent_once),
		T(test_hostile_headers_refused),
		T(test_hostile_mail_injects_nothing),
		T(test_policy_opt_in_action_threshold),
		T(test_policy_rate_limit),
		T(test_dry_run_sends_nothing),
		T(test_body_has_no_bare_cr),
		T(test_refused_recipient_others_get_it),
		T(test_long_headers_folded),
		T(test_stable_note_only_without_cc_stable),
		T(test_stable_note_suggests_fixes),
		T(test_smtp_send_dot_lines_intact),
		T(test_smtp_config_errors),
		T(test_starttls_verified_and_auth),
		T(test_starttls_required),
		T(test_smtps_verified),
#undef T
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
