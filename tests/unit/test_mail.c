/*
 * test_mail.c - patch_from_mail() on the hand-written mails under
 * tests/data/mail/ (one per case of docs/VIOLATIONS.md and of the
 * parser's contract), the sample series, and generated mails for the
 * size limits.  Assertions are on exact field values, lines and counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scoring/patch/mbox.h"
#include "scoring/patch/patch.h"

#define U_FFFD "\xef\xbf\xbd"

/* The diff every tests/data/mail/ case carries (after decoding). */
static const char acme_diff[] =
	"diff --git a/drivers/net/ethernet/acme/acme_main.c "
	"b/drivers/net/ethernet/acme/acme_main.c\n"
	"index 50c00d2..ffc5cac 100644\n"
	"--- a/drivers/net/ethernet/acme/acme_main.c\n"
	"+++ b/drivers/net/ethernet/acme/acme_main.c\n"
	"@@ -40,6 +40,8 @@ static int acme_open(struct net_device *ndev)\n"
	" \tif (err)\n"
	" \t\treturn err;\n"
	" \n"
	"+\tif (priv->mtu == 0)\n"
	"+\t\tpriv->mtu = ETH_DATA_LEN;\n"
	" \tnapi_enable(&priv->napi);\n"
	" \tnetif_start_queue(ndev);\n"
	" \treturn 0;\n";

static const char acme_stat[] =
	" drivers/net/ethernet/acme/acme_main.c | 2 ++\n"
	" 1 file changed, 2 insertions(+)";

static char *data_path(const char *rel)
{
	const char *src = getenv("PT_SOURCE_DIR");
	static char path[1024];

	snprintf(path, sizeof(path), "%s/tests/data/%s", src ? src : ".", rel);
	return path;
}

static struct patch *load(const char *rel)
{
	struct buf b = BUF_INIT;
	struct patch *p = NULL;
	int rc;

	assert_int_equal(pt_read_file(&b, data_path(rel), PT_MAX_MAIL_SIZE), 0);
	rc = patch_from_mail(&p, b.ptr, b.len);
	if (rc)
		fail_msg("%s: %s", rel, pt_error_last());
	buf_free(&b);
	assert_non_null(p);
	assert_int_equal(p->source, PATCH_FROM_MAIL);
	return p;
}

static struct patch *parse_str(const char *mail)
{
	struct patch *p = NULL;

	assert_int_equal(patch_from_mail(&p, mail, strlen(mail)), 0);
	return p;
}

/* The acme diff, one file, one hunk, +2, with the signature gone. */
static void assert_acme_diff(const struct patch *p)
{
	const struct patch_file *f;

	assert_int_equal(p->diff_len, strlen(acme_diff));
	assert_memory_equal(p->diff, acme_diff, p->diff_len);
	assert_int_equal(p->nfiles, 1);
	f = &p->files[0];
	assert_string_equal(f->new_path,
			    "drivers/net/ethernet/acme/acme_main.c");
	assert_int_equal(f->status, PATCH_FILE_MODIFIED);
	assert_int_equal(f->nhunks, 1);
	assert_int_equal(f->hunks[0].nlines, 8);
	assert_int_equal(f->hunks[0].lines[3].kind, '+');
	assert_int_equal(f->hunks[0].lines[3].len,
			 strlen("\tif (priv->mtu == 0)"));
	assert_memory_equal(f->hunks[0].lines[3].text, "\tif (priv->mtu == 0)",
			    f->hunks[0].lines[3].len);
	assert_int_equal(p->added, 2);
	assert_int_equal(p->removed, 0);
}

static void test_rfc2047_utf8(void **state)
{
	struct patch *p = load("mail/rfc2047-utf8.eml");

	(void)state;
	/* a B word and a folded Q word, adjacent: the space between goes */
	assert_string_equal(p->subject.raw,
			    "[PATCH net] net: acme: handle "
			    "caf\xc3\xa9 adapters \xe2\x80\x94 zero MTU");
	assert_string_equal(p->subject.clean, "net: acme: handle caf\xc3\xa9 "
					      "adapters \xe2\x80\x94 zero MTU");
	assert_int_equal(p->subject.ntags, 1);
	assert_string_equal(p->subject.tags[0], "net");
	assert_string_equal(p->author.name, "Ren\xc3\xa9 M\xc3\xbcller");
	assert_string_equal(p->author.email, "rene.mueller@example.de");
	assert_int_equal(p->author_date, 1794488400); /* 13:00:00Z */
	assert_int_equal(p->author_tz, 60);
	assert_string_equal(p->message_id, "20261112-rene-1@example.de");
	assert_null(p->in_reply_to);
	assert_int_equal(p->nreferences, 0);
	assert_string_equal(p->list_id, "netdev.vger.kernel.org");
	assert_string_equal(p->changelog,
			    "The caf\xc3\xa9 adapter firmware "
			    "reports a zero MTU; fall back to 1500.");
	assert_int_equal(p->ntrailers, 1);
	assert_int_equal(p->trailers[0].kind, TRAILER_SIGNED_OFF);
	assert_string_equal(p->trailers[0].name, "Ren\xc3\xa9 M\xc3\xbcller");
	assert_string_equal(p->notes, acme_stat);
	assert_acme_diff(p);
	patch_free(p);
}

static void test_rfc2047_latin1(void **state)
{
	struct patch *p = load("mail/rfc2047-latin1.eml");

	(void)state;
	/* lower-case charset and encoding, words between plain text */
	assert_string_equal(p->subject.raw, "[PATCH] net: acme: r\xc3\xa9"
					    "duire the ring \xc3\xa0 64");
	assert_string_equal(p->author.name, "Andr\xc3\xa9 Pirard");
	assert_string_equal(p->author.email, "andre@example.be");
	assert_int_equal(p->author_date, 1794576600); /* 13:30:00Z */
	assert_int_equal(p->author_tz, -300);
	/* the 8-bit body is ISO-8859-1 by its Content-Type */
	assert_string_equal(p->changelog, "R\xc3\xa9"
					  "duire la taille de "
					  "l'anneau par d\xc3\xa9"
					  "faut.");
	assert_int_equal(p->ntrailers, 1);
	assert_string_equal(p->trailers[0].name, "Andr\xc3\xa9 Pirard");
	assert_acme_diff(p);
	patch_free(p);
}

static void test_folded_subject(void **state)
{
	struct patch *p = load("mail/folded-subject.eml");

	(void)state;
	assert_string_equal(p->subject.raw,
			    "[PATCH net-next v2 2/5] net: "
			    "acme: a rather long subject line that git "
			    "format-patch had to fold across three lines");
	assert_int_equal(p->subject.version, 2);
	assert_int_equal(p->subject.number, 2);
	assert_int_equal(p->subject.total, 5);
	assert_string_equal(p->author.name, "Hopper, Grace");
	assert_string_equal(p->in_reply_to, "folded-0@example.org");
	assert_int_equal(p->nreferences, 2);
	assert_string_equal(p->references[0], "folded-0@example.org");
	assert_string_equal(p->references[1], "folded-1@example.org");
	/* a display name and a folded value */
	assert_string_equal(p->list_id, "netdev.vger.kernel.org");
	assert_int_equal(p->author_date, 1794700799);
	assert_int_equal(p->author_tz, 0);
	assert_string_equal(p->changelog, "Body text.");
	assert_acme_diff(p);
	patch_free(p);
}

static void test_quoted_printable_body(void **state)
{
	struct patch *p = load("mail/qp-body.eml");
	const struct patch_hunk *h;
	const char *l = "\tpriv->coalesce_usecs = priv->coalesce_usecs ?: "
			"ACME_DEFAULT_COALESCE_USECS_WHEN_UNSET;";

	(void)state;
	/* soft line breaks joined, =C3=A9 and =E2=80=94 decoded */
	assert_string_equal(p->changelog,
			    "A long changelog line that is "
			    "longer than seventy-six characters so that it "
			    "gets a soft line break.\nThe caf\xc3\xa9 adapter "
			    "\xe2\x80\x94 again.");
	assert_int_equal(p->nfiles, 1);
	h = &p->files[0].hunks[0];
	assert_int_equal(h->nlines, 4);
	assert_int_equal(h->lines[0].len, strlen("\tmtu = fw_mtu(dev);"));
	assert_memory_equal(h->lines[0].text, "\tmtu = fw_mtu(dev);",
			    h->lines[0].len);
	assert_int_equal(h->lines[1].kind, '+');
	assert_int_equal(h->lines[1].len, strlen(l));
	assert_memory_equal(h->lines[1].text, l, strlen(l));
	assert_int_equal(p->added, 1);
	assert_null(strstr(p->diff, "=3D"));
	patch_free(p);
}

static void test_base64_body(void **state)
{
	struct patch *p = load("mail/base64-body.eml");

	(void)state;
	/* "Content-Transfer-Encoding: BASE64" in capitals */
	assert_true(p->subject.is_resend);
	assert_string_equal(p->changelog, "Fix the default MTU.");
	assert_string_equal(p->notes, acme_stat);
	assert_int_equal(p->ntrailers, 1);
	assert_acme_diff(p);
	patch_free(p);
}

static void check_attachment(const char *rel, const char *id)
{
	struct patch *p = load(rel);

	assert_string_equal(p->message_id, id);
	assert_string_equal(p->subject.clean,
			    "net: acme: don't touch the ring after close");
	assert_int_equal(p->subject.version, 3);
	/* the first text/plain part, the MIME preamble left out */
	assert_string_equal(p->changelog, "acme_poll() may run after "
					  "acme_close() freed the ring.");
	assert_int_equal(p->ntrailers, 1);
	assert_string_equal(p->trailers[0].email, "alan@example.org");
	assert_null(p->notes);
	assert_acme_diff(p);
	patch_free(p);
}

static void test_attachment_x_patch(void **state)
{
	(void)state;
	check_attachment("mail/attach-x-patch.eml", "xpatch@example.org");
}

static void test_attachment_x_diff(void **state)
{
	(void)state;
	check_attachment("mail/attach-x-diff.eml", "xdiff@example.org");
}

static void test_attachment_text_plain(void **state)
{
	(void)state;
	check_attachment("mail/attach-text-plain.eml", "tplain@example.org");
}

static void test_crlf(void **state)
{
	struct patch *p = load("mail/crlf.eml");

	(void)state;
	assert_string_equal(p->subject.raw, "[PATCH 1/1] net: acme: crlf mail");
	assert_string_equal(p->author.email, "ada@example.com");
	assert_int_equal(p->author_tz, 330);
	assert_int_equal(p->author_date, 1794976200);
	assert_string_equal(p->changelog, "A mail with CRLF line endings.");
	assert_null(strchr(p->message, '\r'));
	assert_string_equal(p->notes, acme_stat);
	assert_acme_diff(p);
	patch_free(p);
}

static void test_signature_outside_hunks(void **state)
{
	struct patch *p = load("mail/signature.eml");
	const struct patch_hunk *h;

	(void)state;
	/* "-- " inside the hunk is a removed "- " line, the last one after
	 * the hunk is the signature */
	assert_int_equal(p->nfiles, 1);
	assert_int_equal(p->files[0].nhunks, 1);
	h = &p->files[0].hunks[0];
	assert_int_equal(h->nlines, 5);
	assert_int_equal(h->lines[1].kind, '-');
	assert_int_equal(h->lines[1].len, 2);
	assert_memory_equal(h->lines[1].text, "- ", 2);
	assert_int_equal(h->lines[4].kind, '-');
	assert_int_equal(p->added, 1);
	assert_int_equal(p->removed, 2);
	assert_true(p->diff_len > 4);
	assert_memory_equal(p->diff + p->diff_len - 6, "\n--- \n", 6);
	assert_null(strstr(p->diff, "Ada Lovelace"));
	assert_string_equal(p->changelog, "Drop the empty list items.");
	patch_free(p);
}

static void test_notes_changes_since(void **state)
{
	struct patch *p = load("mail/notes.eml");

	(void)state;
	assert_string_equal(p->notes,
			    "Changes in v2:\n"
			    "- keep the ring size in priv (Grace)\n"
			    "- Link to v1: https://lore.kernel.org/r/"
			    "notes-0@example.com\n\n"
			    " drivers/net/ethernet/acme/acme_main.c | 2 ++\n"
			    " 1 file changed, 2 insertions(+)");
	assert_string_equal(p->message,
			    "Move the allocation into a helper."
			    "\n\nReviewed-by: Grace Hopper <grace@example.org>"
			    "\nSigned-off-by: Ada Lovelace <ada@example.com>");
	assert_string_equal(p->changelog, "Move the allocation into a helper.");
	assert_int_equal(p->ntrailers, 2);
	assert_int_equal(patch_count_trailers(p, TRAILER_REVIEWED), 1);
	assert_int_equal(patch_count_trailers(p, TRAILER_SIGNED_OFF), 1);
	assert_acme_diff(p);
	patch_free(p);
}

static void test_reply_without_diff(void **state)
{
	struct patch *p = load("mail/reply.eml");

	(void)state;
	assert_int_equal(p->subject.reply_depth, 1);
	assert_string_equal(p->subject.clean,
			    "net: acme: factor out rx ring allocation");
	assert_string_equal(p->in_reply_to, "notes-1@example.com");
	assert_int_equal(p->nreferences, 2);
	assert_string_equal(p->references[0], "notes-0@example.com");
	assert_string_equal(p->references[1], "notes-1@example.com");
	assert_int_equal(p->author_date, 1795204800);
	assert_int_equal(p->author_tz, -480);
	/* the quoted "--- a/" lines are not a diff; the signature goes */
	assert_int_equal(p->nfiles, 0);
	assert_null(p->diff);
	assert_null(p->notes);
	assert_non_null(strstr(p->message, "> +++ b/drivers"));
	assert_null(strstr(p->message, "Grace\n"));
	assert_int_equal(p->ntrailers, 1);
	assert_int_equal(p->trailers[0].kind, TRAILER_REVIEWED);
	patch_free(p);
}

static void test_truncated_headers(void **state)
{
	struct patch *p = load("mail/truncated-headers.eml");

	(void)state;
	assert_string_equal(p->message_id, "trunc-1@example.com");
	assert_string_equal(p->subject.clean, "net: acme: cut short");
	assert_int_equal(p->author_date, 1795255200);
	assert_string_equal(p->message, "");
	assert_int_equal(p->ntrailers, 0);
	assert_int_equal(p->nfiles, 0);
	patch_free(p);
}

static void test_truncated_multipart(void **state)
{
	struct patch *p = load("mail/truncated-multipart.eml");

	(void)state;
	/* no closing boundary, base64 cut mid-hunk-header: what decodes
	 * is kept, the file is named, it has no complete hunk */
	assert_string_equal(p->changelog, "The attachment is cut short.");
	assert_int_equal(p->nfiles, 1);
	assert_string_equal(p->files[0].new_path,
			    "drivers/net/ethernet/acme/acme_main.c");
	assert_int_equal(p->files[0].nhunks, 0);
	assert_int_equal(p->added + p->removed, 0);
	patch_free(p);
}

static void test_invalid_utf8_replaced(void **state)
{
	struct patch *p = load("mail/invalid-utf8.eml");
	const struct patch_line *l;

	(void)state;
	/* one U+FFFD per byte that starts no valid sequence */
	assert_string_equal(p->subject.raw,
			    "[PATCH] net: acme: caf" U_FFFD " " U_FFFD);
	assert_string_equal(p->author.name, "Bad " U_FFFD U_FFFD " Name");
	assert_string_equal(p->changelog,
			    "Invalid bytes: " U_FFFD " here, a "
			    "lone " U_FFFD " there, an overlong " U_FFFD U_FFFD
			    ".");
	/* the diff keeps its bytes, as git am applies them */
	assert_int_equal(p->nfiles, 1);
	l = &p->files[0].hunks[0].lines[1];
	assert_int_equal(l->kind, '+');
	assert_int_equal(l->len, 10);
	assert_memory_equal(l->text, "/* caf\xe9 */", 10);
	patch_free(p);
}

static void test_encoded_word_rules(void **state)
{
	struct patch *p;

	(void)state;
	p = parse_str("Subject: =?utf-8?q?a?= \t =?UTF-8?B?Yg==?= c "
		      "=?x-no-such-charset?q?caf=E9?= =?utf-8?q?d?=x\n"
		      "From: =?iso-8859-15?q?=A4uro?= <E@X.ORG> (comment)\n"
		      "Message-ID: bare-id@example.org\n"
		      "References: old@x new@x\n\nbody\n");
	/* adjacent words joined; text after a word keeps its space; an
	 * unknown charset is read as UTF-8; a word inside a token decodes */
	assert_string_equal(p->subject.raw, "ab c caf" U_FFFD "dx");
	assert_string_equal(p->author.name, "\xe2\x82\xac"
					    "uro");
	assert_string_equal(p->author.email, "e@x.org");
	assert_string_equal(p->message_id, "bare-id@example.org");
	assert_int_equal(p->nreferences, 2);
	assert_string_equal(p->references[1], "new@x");
	assert_int_equal(p->author_date, 0); /* no Date: */
	assert_string_equal(p->message, "body");
	patch_free(p);
}

static void test_loose_from_and_dates(void **state)
{
	struct patch *p;

	(void)state;
	p = parse_str("From ada@example.com Mon Sep 17 00:00:00 2001\n"
		      "From: ada@Example.com (Ada Lovelace)\n"
		      "Date: 2 Nov 26 09:00 GMT\n"
		      "Subject: [PATCH] x\n\nbody\n");
	assert_string_equal(p->author.name, "Ada Lovelace");
	assert_string_equal(p->author.email, "ada@example.com");
	assert_int_equal(p->author_date, 1793610000); /* 2026-11-02 09:00Z */
	patch_free(p);
	p = parse_str("From: Jane Doe <jane@example.org\n"
		      "Date: yesterday\nSubject: x\n\n");
	assert_string_equal(p->author.name, "Jane Doe");
	assert_string_equal(p->author.email, "jane@example.org");
	assert_int_equal(p->author_date, 0);
	patch_free(p);
}

static void test_header_block_ends_early(void **state)
{
	struct patch *p;

	(void)state;
	/* no blank line: the first line that is not a field starts the
	 * body; an encoded word inside a quoted display name decodes */
	p = parse_str("From: \"=?UTF-8?Q?Ren=C3=A9?=\" <r@x>\nSubject: x\n"
		      "this is the body\nmore\n");
	assert_string_equal(p->author.name, "Ren\xc3\xa9");
	assert_string_equal(p->message, "this is the body\nmore");
	patch_free(p);
}

static void test_broken_mime_headers(void **state)
{
	struct patch *p;

	(void)state;
	/* multipart without a boundary: the body is read as plain text */
	p = parse_str("From: a@b\nSubject: x\nContent-Type: multipart/mixed"
		      "\n\nhello\n");
	assert_string_equal(p->message, "hello");
	patch_free(p);
	/* garbage Content-Type, unknown transfer encoding: as 8bit text */
	p = parse_str("From: a@b\nSubject: x\nContent-Type: ;;;\n"
		      "Content-Transfer-Encoding: x-uuencode\n\nhello\n");
	assert_string_equal(p->message, "hello");
	patch_free(p);
	/* a lone CR stays in the body (in a subject it is a space), NUL
	 * becomes U+FFFD */
	p = NULL;
	assert_int_equal(patch_from_mail(&p, "Subject: a\rb\n\nx\0y\rz\n", 20),
			 0);
	assert_string_equal(p->subject.raw, "a b");
	assert_string_equal(p->message, "x" U_FFFD "y\rz");
	patch_free(p);
}

/* n multiparts, each the only part of the one before. */
static char *nested(int n)
{
	struct buf b = BUF_INIT;
	int i;

	assert_int_equal(buf_addstr(&b, "From: a@b\nSubject: x\nContent-Type:"
					" multipart/mixed; boundary=b0z\n\n"),
			 0);
	for (i = 1; i < n; i++)
		assert_int_equal(buf_addf(&b,
					  "--b%dz\nContent-Type: "
					  "multipart/mixed; boundary=b%dz\n\n",
					  i - 1, i),
				 0);
	assert_int_equal(buf_addf(&b, "--b%dz\n\nhello\n", n - 1), 0);
	for (i = n - 1; i >= 0; i--)
		assert_int_equal(buf_addf(&b, "--b%dz--\n", i), 0);
	return buf_detach(&b, NULL);
}

static void test_deep_mime_nesting(void **state)
{
	struct patch *p = NULL;
	clock_t t0 = clock();
	char *m;

	(void)state;
	m = nested(20);
	assert_int_equal(patch_from_mail(&p, m, strlen(m)), 0);
	assert_string_equal(p->message, "hello");
	patch_free(p);
	free(m);
	p = NULL;
	m = nested(40);
	assert_int_equal(patch_from_mail(&p, m, strlen(m)), PT_ETOOBIG);
	assert_non_null(strstr(pt_error_last(), "nested deeper than 32"));
	free(m);
	/* libetpan is quadratic in the depth: refused before it runs */
	m = nested(50000);
	assert_int_equal(patch_from_mail(&p, m, strlen(m)), PT_ETOOBIG);
	assert_non_null(strstr(pt_error_last(), "multipart declarations"));
	assert_null(p);
	free(m);
	/* flat: one part too many */
	{
		struct buf b = BUF_INIT;
		int i;

		assert_int_equal(buf_addstr(&b,
					    "From: a@b\nSubject: x\n"
					    "Content-Type: multipart/mixed; "
					    "boundary=b\n\n"),
				 0);
		for (i = 0; i <= (int)PT_MAX_MIME_PARTS; i++)
			assert_int_equal(buf_addstr(&b, "--b\n\nx\n"), 0);
		assert_int_equal(buf_addstr(&b, "--b--\n"), 0);
		assert_int_equal(patch_from_mail(&p, b.ptr, b.len), PT_ETOOBIG);
		assert_non_null(strstr(pt_error_last(), "MIME parts"));
		buf_free(&b);
	}
	assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 5.0);
}

static void test_multipart_alternative(void **state)
{
	struct patch *p;

	(void)state;
	p = parse_str("From: a@b\nSubject: [PATCH] alt\n"
		      "Content-Type: multipart/mixed; boundary=o\n\n"
		      "--o\nContent-Type: multipart/alternative; boundary=i\n\n"
		      "--i\nContent-Type: text/html\n\n<p>html</p>\n"
		      "--i\nContent-Type: text/plain; charset=iso-8859-1\n"
		      "Content-Transfer-Encoding: quoted-printable\n\n"
		      "Plain caf=E9.\n--i--\n"
		      "--o\nContent-Type: message/rfc822\n\n"
		      "Subject: inner\n\ndiff --git a/x b/x\n--- a/x\n+++ b/x\n"
		      "@@ -1 +1 @@\n-a\n+b\n"
		      "--o--\n");
	/* text/plain inside the alternative; an attached mail is not ours */
	assert_string_equal(p->message, "Plain caf\xc3\xa9.");
	assert_int_equal(p->nfiles, 0);
	patch_free(p);
}

static void test_not_a_mail(void **state)
{
	struct patch *p = (struct patch *)1;

	(void)state;
	assert_int_equal(patch_from_mail(&p, "just text\n", 10), PT_EINVAL);
	assert_null(p);
	assert_non_null(strstr(pt_error_last(), "no header"));
	assert_int_equal(patch_from_mail(&p, "", 0), PT_EINVAL);
	assert_int_equal(patch_from_mail(&p, NULL, 0), PT_EINVAL);
	assert_int_equal(patch_from_mail(&p, NULL, 5), PT_EINVAL);
	assert_null(p);
}

/* A generated 50 MB line: refused fast with the named limit. */
static void test_huge_line(void **state)
{
	const size_t big = 50u << 20;
	static const char head[] = "From: a@b\nSubject: [PATCH] big\n"
				   "Message-ID: <big@x>\n\n";
	struct patch *p = NULL;
	char *m;
	clock_t t0 = clock();

	(void)state;
	m = malloc(sizeof(head) + big + 2);
	assert_non_null(m);
	memcpy(m, head, sizeof(head) - 1);
	memset(m + sizeof(head) - 1, 'x', big);
	m[sizeof(head) - 1 + big] = '\n';
	assert_int_equal(patch_from_mail(&p, m, sizeof(head) + big),
			 PT_ETOOBIG);
	assert_null(p);
	assert_non_null(strstr(pt_error_last(), "line longer than"));
	/* the same line as a header */
	memcpy(m, "Subject: ", 9);
	memset(m + 9, 'x', sizeof(head) - 1 - 9);
	assert_int_equal(patch_from_mail(&p, m, big), PT_ETOOBIG);
	assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 5.0);
	free(m);
}

static void test_limits(void **state)
{
	struct buf b = BUF_INIT;
	struct patch *p = NULL;
	char *m;
	size_t i;

	(void)state;
	/* over PT_MAX_MAIL_SIZE */
	m = calloc(1, (size_t)PT_MAX_MAIL_SIZE + 1);
	assert_non_null(m);
	assert_int_equal(patch_from_mail(&p, m, (size_t)PT_MAX_MAIL_SIZE + 1),
			 PT_ETOOBIG);
	free(m);
	/* a folded header that unfolds past PT_MAX_HEADER_LEN */
	assert_int_equal(buf_addstr(&b, "From: a@b\nSubject: x\n"), 0);
	for (i = 0; i < PT_MAX_HEADER_LEN / 1000 + 2; i++) {
		assert_int_equal(buf_addch(&b, ' '), 0);
		for (int k = 0; k < 999; k++)
			assert_int_equal(buf_addch(&b, 'y'), 0);
		assert_int_equal(buf_addch(&b, '\n'), 0);
	}
	assert_int_equal(buf_addstr(&b, "\nbody\n"), 0);
	assert_int_equal(patch_from_mail(&p, b.ptr, b.len), PT_ETOOBIG);
	assert_non_null(strstr(pt_error_last(), "'Subject'"));
	/* short base64 lines that decode to one line over the limit */
	buf_reset(&b);
	assert_int_equal(buf_addstr(&b,
				    "From: a@b\nSubject: x\n"
				    "Content-Transfer-Encoding: base64\n\n"),
			 0);
	for (i = 0; i < (PT_MAX_LINE_LEN / 57) + 2; i++) {
		for (int k = 0; k < 19; k++) /* 57 x's a line */
			assert_int_equal(buf_addstr(&b, "eHh4"), 0);
		assert_int_equal(buf_addch(&b, '\n'), 0);
	}
	assert_int_equal(patch_from_mail(&p, b.ptr, b.len), PT_ETOOBIG);
	assert_null(p);
	buf_free(&b);
}

struct series {
	struct patch *p[8];
	size_t n;
};

static int collect(const char *msg, size_t len, size_t index, void *ctx)
{
	struct series *s = ctx;

	assert_int_equal(index, s->n);
	assert_true(s->n < 8);
	assert_int_equal(patch_from_mail(&s->p[s->n], msg, len), 0);
	s->n++;
	return 0;
}

static void test_sample_series(void **state)
{
	struct buf b = BUF_INIT;
	struct series s = { { NULL }, 0 };
	const char *cover = "cover.1762070400.git.ada@example.com";
	size_t i;

	(void)state;
	assert_int_equal(pt_read_file(&b, data_path("sample-series.mbox"),
				      PT_MAX_MAIL_SIZE),
			 0);
	assert_int_equal(mbox_foreach(b.ptr, b.len, collect, &s), 0);
	assert_int_equal(s.n, 4);
	assert_true(s.p[0]->subject.is_cover);
	assert_string_equal(s.p[0]->message_id, cover);
	assert_int_equal(s.p[0]->nfiles, 0);
	assert_string_equal(s.p[0]->subject.clean,
			    "net: acme: rx ring fixes and resize support");
	for (i = 1; i < 4; i++) {
		assert_int_equal(s.p[i]->subject.number, i);
		assert_int_equal(s.p[i]->subject.total, 3);
		assert_string_equal(s.p[i]->subject.tags[0], "net-next");
		assert_string_equal(s.p[i]->in_reply_to, cover);
		assert_string_equal(s.p[i]->list_id, "netdev.vger.kernel.org");
		assert_string_equal(s.p[i]->author.email, "ada@example.com");
		assert_int_equal(s.p[i]->author_date, 1793606400 + i);
		assert_non_null(strstr(s.p[i]->notes, "changed"));
	}
	assert_string_equal(s.p[1]->subject.clean,
			    "net: acme: fix NULL "
			    "dereference in acme_rx_poll()");
	assert_true(patch_is_tagged_fix(s.p[1]));
	assert_int_equal(s.p[1]->ntrailers, 5);
	assert_int_equal(s.p[1]->nfiles, 2);
	assert_int_equal(s.p[1]->added, 5);
	assert_int_equal(s.p[2]->nfiles, 2);
	assert_int_equal(s.p[2]->added, 14);
	assert_int_equal(s.p[2]->removed, 4);
	assert_int_equal(patch_count_trailers(s.p[2], TRAILER_REVIEWED), 1);
	assert_int_equal(s.p[3]->nfiles, 2);
	assert_int_equal(s.p[3]->files[1].status, PATCH_FILE_ADDED);
	assert_int_equal(s.p[3]->files[1].added, 39);
	for (i = 0; i < s.n; i++)
		patch_free(s.p[i]);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc2047_utf8),
		cmocka_unit_test(test_rfc2047_latin1),
		cmocka_unit_test(test_folded_subject),
		cmocka_unit_test(test_quoted_printable_body),
		cmocka_unit_test(test_base64_body),
		cmocka_unit_test(test_attachment_x_patch),
		cmocka_unit_test(test_attachment_x_diff),
		cmocka_unit_test(test_attachment_text_plain),
		cmocka_unit_test(test_crlf),
		cmocka_unit_test(test_signature_outside_hunks),
		cmocka_unit_test(test_notes_changes_since),
		cmocka_unit_test(test_reply_without_diff),
		cmocka_unit_test(test_truncated_headers),
		cmocka_unit_test(test_truncated_multipart),
		cmocka_unit_test(test_invalid_utf8_replaced),
		cmocka_unit_test(test_encoded_word_rules),
		cmocka_unit_test(test_loose_from_and_dates),
		cmocka_unit_test(test_header_block_ends_early),
		cmocka_unit_test(test_broken_mime_headers),
		cmocka_unit_test(test_deep_mime_nesting),
		cmocka_unit_test(test_multipart_alternative),
		cmocka_unit_test(test_not_a_mail),
		cmocka_unit_test(test_huge_line),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_sample_series),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
