/*
 * test_reply.c - the reply itself, end to end against a real SMTP
 * server: bot/mail/reply.c builds the mail from templates/
 * (scoring/util/template.c), bot/outbox/policy.c picks the recipients,
 * bot/mail/smtp.c sends it through libcurl to tests/lib/smtpsink.py
 * (aiosmtpd) on loopback, and every check reads what the sink stored
 * (DIR/mail/new and the envelope): threading headers, Message-ID,
 * recipients, body; no header injection and header lines within RFC
 * 5322's limits; References bounded however long the thread; the
 * stable note; each reason listed once.  Sending (never twice, crashes, TLS, AUTH) is
 * test_reply_send.c, the policy test_reply_policy.c; the fixture is
 * tests/lib/replyfx.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replyfx.h"
#include "bot/cmd/schema.h"

/* ---- 1. the reply as it arrives ------------------------------------- */

static void test_reply_arrives_threaded(void **state)
{
	struct patch *p = rfx_load("acme-v2-2.eml"), *got = NULL;
	struct reply_in in = rfx_risk_in(0.42);
	struct reply_out out;
	struct buf id = BUF_INIT;
	char *msg, *env, *from, *rcpts, *flat, *want_id, *v;
	int n;

	(void)state;
	rfx_sent_one(&out, p, &in, &msg, &env);
	assert_string_equal(out.subsystem, "acme");

	/* the Message-ID from (patch, model version, kind), nothing else */
	want_id = rfx_expected_msgid(PATCH_ID, MODEL, "risk");
	assert_int_equal(reply_message_id(&id, PATCH_ID, MODEL, "risk",
					  "pt.example"),
			 0);
	assert_string_equal(id.ptr, want_id);
	assert_string_equal(out.message_id, want_id);
	buf_reset(&id);
	assert_int_equal(buf_addf(&id, "<%s>", want_id), 0);
	rfx_assert_header(msg, "Message-ID", id.ptr);

	/* threading, exactly */
	rfx_assert_header(msg, "Subject",
			  "Re: [PATCH net v2 2/3] net: acme: fall "
			  "back to ETH_DATA_LEN on a zero MTU");
	rfx_assert_header(msg, "In-Reply-To", "<" PATCH_ID ">");
	rfx_assert_header(msg, "References",
			  "<20261110-acme-v1-0-rene@example.de> "
			  "<20261112-acme-v2-0-rene@example.de> "
			  "<" PATCH_ID ">");
	rfx_assert_header(msg, "Auto-Submitted", "auto-generated");
	rfx_assert_header(msg, "X-Patchwork-Hint", "ignore");
	rfx_assert_header(msg, "From", FROM);
	rfx_assert_header(msg, "MIME-Version", "1.0");
	rfx_assert_header(msg, "Content-Type", "text/plain; charset=UTF-8");
	rfx_assert_header(msg, "Content-Transfer-Encoding", "8bit");
	assert_null(rfx_header(msg, "Bcc", &n));
	assert_int_equal(n, 0);

	/* To: the author (name encoded); Cc: the list and MAINTAINERS */
	v = rfx_header(msg, "To", &n);
	assert_int_equal(n, 1);
	assert_non_null(strstr(v, "=?UTF-8?B?"));
	assert_non_null(strstr(v, " <rene.mueller@example.de>"));
	free(v);
	rfx_assert_header(msg, "Cc",
			  "netdev@vger.kernel.org, alice@maint.example, "
			  "bob@rev.example, dave@net.example");

	/* the envelope: From's address; author + list + maintainers, no
	 * THE REST, nobody twice */
	rcpts = rfx_env_rcpts(env, &from);
	assert_string_equal(from, "bot@pt.example");
	assert_string_equal(rcpts, "alice@maint.example, bob@rev.example, "
				   "dave@net.example, netdev@vger.kernel.org, "
				   "rene.mueller@example.de");

	/* the body: plain UTF-8 text wrapped at 72 */
	flat = rfx_check_body(msg);
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
	assert_string_equal(got->subject.raw,
			    "Re: [PATCH net v2 2/3] net: "
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

/* ---- 3. header injection -------------------------------------------- */

static void refused(struct patch *p, const char *header_name)
{
	struct reply_in in = rfx_risk_in(0.42);
	struct reply_out out;
	struct smtp_opts o;
	char want[64];

	rfx_smtp_opts(&o, "plain");
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
	assert_int_equal(rfx_outbox_rows(), 0);
}

static void test_hostile_headers_refused(void **state)
{
	static const char *const evil[] = {
		"foo\r\nBcc: evil@x",
		"foo\nBcc: evil@x",
		"foo\rBcc: evil@x",
	};
	struct patch *p;
	char *saved;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(evil) / sizeof(*evil); i++) {
		p = rfx_load("acme-v2-2.eml");
		rfx_replace(&p->subject.raw, evil[i]);
		refused(p, "Subject");
		patch_free(p);

		p = rfx_load("acme-v2-2.eml");
		rfx_replace(&p->author.name, evil[i]);
		refused(p, "To");
		patch_free(p);
	}
	p = rfx_load("acme-v2-2.eml");
	rfx_replace(&p->author.email, "rene@example.de\r\nBcc: evil@x");
	refused(p, "To");
	patch_free(p);

	p = rfx_load("acme-v2-2.eml");
	rfx_replace(&p->references[0], "a@b>\r\nBcc: <evil@x");
	refused(p, "References");
	patch_free(p);

	p = rfx_load("acme-v2-2.eml");
	rfx_replace(&p->message_id, "a@b>\r\nBcc: <evil@x");
	refused(p, "In-Reply-To");
	patch_free(p);

	/* values from the configuration are checked as well */
	p = rfx_load("acme-v2-2.eml");
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
	struct patch *p = rfx_load("hostile.eml");
	struct reply_in in = rfx_risk_in(0.42);
	struct reply_out out;
	struct smtp_opts o;
	char *msg, *env, *from, *rcpts, *v;
	int rc, n;

	(void)state;
	rfx_smtp_opts(&o, "plain");
	rc = reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0);
	if (rc) { /* refused: then nothing went out */
		assert_int_equal(rc, PT_EINVAL);
		assert_int_equal(smtpsim_count(&E.plain), 0);
		goto out;
	}
	assert_int_equal(out.status, REPLY_SENT);
	rfx_one_message(&E.plain, &msg, &env);
	v = rfx_header(msg, "Subject", &n);
	assert_int_equal(n, 1);
	free(v);
	assert_null(rfx_header(msg, "Bcc", &n));
	assert_int_equal(n, 0);
	rcpts = rfx_env_rcpts(env, &from);
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

/* Author and subject reach the body too: no bare CR or LF gets there. */
static void test_body_has_no_bare_cr(void **state)
{
	static char *list_only[] = { "list", NULL };
	struct patch *p = rfx_load("acme-v2-2.eml");
	struct reply_in in = rfx_risk_in(0.42);
	const struct policy_subsys *s = NULL;
	struct reply_out out;
	char **saved, *msg, *env, *flat;

	(void)state;
	/* the author is no recipient, so the name is in no header */
	assert_int_equal(policy_match(E.pol, p, NULL, &s), 0);
	saved = s->recipients;
	((struct policy_subsys *)s)->recipients = list_only;
	rfx_replace(&p->author.name, "Eve\rX\r\nBcc: evil@x");
	rfx_replace(&p->subject.clean, "net: acme: foo\r\nbar\rbaz");
	rfx_sent_one(&out, p, &in, &msg, &env);
	((struct policy_subsys *)s)->recipients = saved;
	flat = rfx_check_body(msg);
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
	struct patch *p = rfx_load("acme-v2-2.eml"), *got = NULL;
	struct reply_in in = rfx_risk_in(0.42);
	struct reply_out out;
	struct buf want = BUF_INIT;
	const char *l, *e;
	char *msg, *env;

	if (subject)
		rfx_replace(&p->subject.raw, subject);
	if (name)
		rfx_replace(&p->author.name, name);
	rfx_sent_one(&out, p, &in, &msg, &env);
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
		char *to = rfx_header(msg, "To", &n);

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
	assert_int_equal(db_open(&E.db,
				 rfx_pathf("%s/state-%d.db", E.dir, ++E.ndb),
				 &bot_db_owners),
			 0);
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
		assert_int_equal(buf_addstr(&name,
					    i % 2 ? "Müller " : "Smith, "),
				 0);
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

/*
 * A thread with 10,000 References: the reply keeps the first and the
 * last few (RFC 5322 3.6.4), then the patch, in a header of bounded size.
 */
static void test_many_references_bounded(void **state)
{
	enum { NREFS = 10000 };
	struct patch *p = rfx_load("acme-v2-2.eml"), *got = NULL;
	struct reply_in in = rfx_risk_in(0.42);
	struct reply_out out;
	struct buf id = BUF_INIT;
	char *msg, *env, *refs;
	size_t i, n;
	int nh;

	(void)state;
	for (i = 0; i < p->nreferences; i++)
		free(p->references[i]);
	free(p->references);
	p->references = calloc(NREFS, sizeof(*p->references));
	assert_non_null(p->references);
	for (i = 0; i < NREFS; i++) {
		buf_reset(&id);
		assert_int_equal(buf_addf(&id, "ref-%zu@thread.example", i), 0);
		p->references[i] = strdup(id.ptr);
		assert_non_null(p->references[i]);
	}
	p->nreferences = NREFS;
	rfx_sent_one(&out, p, &in, &msg, &env);
	refs = rfx_header(msg, "References", &nh);
	assert_int_equal(nh, 1);
	assert_true(strlen(refs) < 2048);
	assert_int_equal(patch_from_mail(&got, msg, strlen(msg)), 0);
	n = got->nreferences;
	assert_true(n >= 3 && n <= 32);
	assert_string_equal(got->references[0], "ref-0@thread.example");
	assert_string_equal(got->references[n - 2], "ref-9999@thread.example");
	assert_string_equal(got->references[n - 3], "ref-9998@thread.example");
	assert_string_equal(got->references[n - 1], PATCH_ID);
	assert_string_equal(got->in_reply_to, PATCH_ID);
	patch_free(got);
	free(refs);
	free(msg);
	free(env);
	buf_free(&id);
	reply_out_clear(&out);
	patch_free(p);
}

/* Without a Fixes: tag the note shows the one blame suggested, if any. */
static void test_stable_note_suggests_fixes(void **state)
{
	struct patch *p = rfx_load("pwm-1.eml");
	struct reply_in in = rfx_risk_in(0.7);
	struct reply_out out;
	char *msg, *env, *flat;

	(void)state;
	in.kind = "stable";
	in.suggested_fixes = "Fixes: 0123456789ab (\"pwm: acme: add the "
			     "driver\")";
	rfx_sent_one(&out, p, &in, &msg, &env);
	assert_non_null(strstr(msg, "\r\n  Cc: stable@vger.kernel.org\r\n"
				    "  Fixes: 0123456789ab (\"pwm: acme: add "
				    "the driver\")\r\n\r\n"));
	assert_null(strstr(msg, "<sha1>"));
	flat = rfx_check_body(msg);
	assert_non_null(strstr(flat, "tag and no Fixes: tag."));
	assert_non_null(strstr(flat, "(git blame); please check it."));
	free(flat);
	free(msg);
	free(env);
	reply_out_clear(&out);
	patch_free(p);
}

/*
 * A reason that reads as an earlier one (the same sentence twice, or but
 * for case and line breaks) is listed once; a distinct one is kept.
 */
static void test_reasons_listed_once(void **state)
{
	static const struct reply_reason twice[] = {
		{ "the touched files had 3 fixes before", "raises" },
		{ "subject says 'fix'", "raises" },
		{ "the touched files had 3 fixes before", "raises" },
		{ "The touched files had 3\r\nfixes  before", "raises" },
		{ "the touched files had 4 fixes before", "lowers" },
	};
	struct patch *p = rfx_load("acme-v2-2.eml");
	struct reply_in in = rfx_risk_in(0.42);
	struct reply_out out;
	char *msg, *env, *flat;
	const char *at;
	int n = 0;

	(void)state;
	in.reasons = twice;
	in.nreasons = sizeof(twice) / sizeof(*twice);
	rfx_sent_one(&out, p, &in, &msg, &env);
	flat = rfx_check_body(msg);
	for (at = flat; (at = strstr(at, "had 3 fixes before")); at++)
		n++;
	assert_int_equal(n, 1);
	assert_non_null(strstr(flat, "1. the touched files had 3 fixes "
				     "before (raises) 2. subject says 'fix' "
				     "(raises) 3. the touched files had 4 "
				     "fixes before (lowers)"));
	assert_null(strstr(flat, " 4. "));
	free(flat);
	free(msg);
	free(env);
	reply_out_clear(&out);
	patch_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, rfx_setup, rfx_teardown)
		T(test_reply_arrives_threaded),
		T(test_hostile_headers_refused),
		T(test_hostile_mail_injects_nothing),
		T(test_body_has_no_bare_cr),
		T(test_long_headers_folded),
		T(test_many_references_bounded),
		T(test_stable_note_suggests_fixes),
		T(test_reasons_listed_once),
#undef T
	};

	return cmocka_run_group_tests(tests, rfx_group_setup,
				      rfx_group_teardown);
}
