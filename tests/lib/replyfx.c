/*
 * replyfx.c - the fixture of the reply tests (see replyfx.h): the
 * configuration they share, the SMTP sinks they send to, and the helpers
 * that read the sinks and the outbox back.  Moved from test_reply.c as
 * it was when that file was split by subject.
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
#include <signal.h>
#include <sys/stat.h>

#include "pwsim.h"
#include "replyfx.h"
#include "scoring/store/config.h"
#include "bot/cmd/schema.h"

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
static const char conf_common[] = "[reply]\n"
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

struct rfx_env E;

/* ---- helpers ------------------------------------------------------- */

char *rfx_pathf(const char *fmt, ...)
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
int rfx_write_conf(const char *name, const char *smtp)
{
	struct buf b = BUF_INIT;
	int rc;

	rc = buf_addf(&b, conf_common, pwsim_data_dir(), E.dir);
	if (!rc)
		rc = buf_addf(&b, "[smtp]\n\ttimeout = 5\n%s", smtp);
	if (!rc)
		rc = write_file(rfx_pathf("%s/%s.conf", E.dir, name), b.ptr,
				0600);
	buf_free(&b);
	return rc;
}

void rfx_smtp_opts(struct smtp_opts *o, const char *name)
{
	struct config *cfg = NULL;

	assert_int_equal(config_open(&cfg,
				     rfx_pathf("%s/%s.conf", E.dir, name)),
			 0);
	assert_int_equal(smtp_opts_from_config(o, cfg), 0);
	config_free(cfg);
}

struct patch *rfx_load(const char *name)
{
	struct buf b = BUF_INIT;
	struct patch *p = NULL;

	assert_int_equal(pt_read_file(&b,
				      rfx_pathf("%s/reply/%s", pwsim_data_dir(),
						name),
				      1 << 20),
			 0);
	assert_int_equal(patch_from_mail(&p, b.ptr, b.len), 0);
	buf_free(&b);
	return p;
}

void rfx_replace(char **field, const char *value)
{
	free(*field);
	*field = strdup(value);
	assert_non_null(*field);
}

static const struct reply_reason reasons[] = {
	{ LONG_REASON, "raises" },
	{ "no Reviewed-by yet", "raises" },
};

struct reply_in rfx_risk_in(double probability)
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
char *rfx_header(const char *msg, const char *name, int *n)
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
				assert_int_equal(buf_add(&v, p,
							 (size_t)(e - p)),
						 0);
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

void rfx_assert_header(const char *msg, const char *name, const char *want)
{
	int n;
	char *v = rfx_header(msg, name, &n);

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

char *rfx_env_rcpts(const char *env, char **from)
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
char *rfx_check_body(const char *msg)
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
char *rfx_expected_msgid(const char *msgid, const char *version,
			 const char *kind)
{
	struct buf in = BUF_INIT, out = BUF_INIT;
	unsigned char d[32];
	int i;

	assert_int_equal(buf_add(&in, msgid, strlen(msgid) + 1), 0);
	assert_int_equal(buf_add(&in, version, strlen(version) + 1), 0);
	assert_int_equal(buf_addstr(&in, kind), 0);
	assert_int_equal(gnutls_hash_fast(GNUTLS_DIG_SHA256, in.ptr, in.len, d),
			 0);
	assert_int_equal(buf_addf(&out, "pt-%s-", kind), 0);
	for (i = 0; i < 12; i++)
		assert_int_equal(buf_addf(&out, "%02x", d[i]), 0);
	assert_int_equal(buf_addstr(&out, "@pt.example"), 0);
	buf_free(&in);
	return buf_detach(&out, NULL);
}

/* The outbox row's state and last_error for a dedupe key. */
char *rfx_outbox_field(const char *key, const char *col)
{
	struct buf sql = BUF_INIT;
	sqlite3_stmt *st;
	char *r = NULL;

	assert_int_equal(buf_addf(&sql,
				  "SELECT %s FROM outbox WHERE "
				  "dedupe_key = ?",
				  col),
			 0);
	assert_int_equal(db_prepare(&st, E.db, sql.ptr), 0);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		r = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	buf_free(&sql);
	return r;
}

long rfx_outbox_rows(void)
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

void rfx_one_message(const struct smtpsim *s, char **msg, char **env)
{
	assert_int_equal(smtpsim_count(s), 1);
	assert_int_equal(smtpsim_message(s, 0, msg, env), 0);
}

/*
 * Send p's reply through the plain sink; it must go out as the one
 * message the sink holds, returned in *msg and *env.
 */
void rfx_sent_one(struct reply_out *out, const struct patch *p,
		  const struct reply_in *in, char **msg, char **env)
{
	struct smtp_opts o;
	int rc;

	rfx_smtp_opts(&o, "plain");
	rc = reply_for_patch(out, E.pol, &o, E.db, p, in, 0);
	smtp_opts_clear(&o);
	if (rc)
		fail_msg("reply_for_patch: %s", pt_error_last());
	assert_int_equal(out->status, REPLY_SENT);
	rfx_one_message(&E.plain, msg, env);
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
		rc = rfx_write_conf("plain", b.ptr);
	buf_reset(&b);
	if (!rc)
		rc = buf_addf(&b, "\turl = %s\n", E.plain.url);
	if (!rc)
		rc = rfx_write_conf("plain-needs-tls", b.ptr);
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
			rc = buf_addf(&b,
				      "\turl = %s\n"
				      "\tca-file = %s/%s-cert.pem\n"
				      "\tuser = bot\n\ttoken-file = %s/%s\n",
				      E.starttls.url, E.dir, c[i].ca, E.dir,
				      c[i].pass);
			if (!rc)
				rc = rfx_write_conf(c[i].name, b.ptr);
		}
	}
	buf_reset(&b);
	if (!rc)
		rc = buf_addf(&b, "\turl = %s\n\tca-file = %s/ca-cert.pem\n",
			      E.smtps.url, E.dir);
	if (!rc)
		rc = rfx_write_conf("smtps", b.ptr);
	buf_free(&b);
	return rc;
}

int rfx_group_setup(void **state)
{
	struct config *cfg = NULL;
	int rc;

	(void)state;
	snprintf(E.dir, sizeof(E.dir), "%s", "/tmp/pt-reply-XXXXXX");
	if (!mkdtemp(E.dir))
		return -1;
	if (smtpsim_make_cert(E.dir, "ca") || smtpsim_make_cert(E.dir, "other"))
		return -1;
	if (write_file(rfx_pathf("%s/MAINTAINERS", E.dir), maintainers, 0644) ||
	    write_file(rfx_pathf("%s/pass", E.dir), PASSWORD "\n", 0600) ||
	    write_file(rfx_pathf("%s/wrong", E.dir), WRONG_PASSWORD "\n", 0600))
		return -1;
	rc = start_sinks();
	if (rc == 77) {
		fprintf(stderr, "skip: no python3 or smtpsink.py\n");
		rfx_group_teardown(state);
		exit(77);
	}
	if (!rc)
		rc = write_confs();
	if (!rc)
		rc = config_open(&cfg, rfx_pathf("%s/plain.conf", E.dir));
	if (!rc)
		rc = policy_load(&E.pol, cfg);
	if (rc)
		fprintf(stderr, "setup: %s\n", pt_error_last());
	config_free(cfg);
	return rc ? -1 : 0;
}

int rfx_group_teardown(void **state)
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
int rfx_setup(void **state)
{
	(void)state;
	smtpsim_clear(&E.plain);
	smtpsim_clear(&E.starttls);
	smtpsim_clear(&E.smtps);
	return db_open(&E.db, rfx_pathf("%s/state-%d.db", E.dir, ++E.ndb),
		       &bot_db_owners);
}

int rfx_teardown(void **state)
{
	(void)state;
	db_close(E.db);
	E.db = NULL;
	return 0;
}
