/*
 * test_reply_send.c - sending replies against a real SMTP server (the
 * fixture is tests/lib/replyfx.c): never twice, also after a sender
 * killed with SIGKILL before and after DATA, after a connection dropped
 * after the final dot and after the server was down; sent again after a
 * 4yz answer to the dot; a recipient refused by the relay; smtp_send's
 * dot lines and its configuration errors; STARTTLS and SMTPS verified
 * against the test's own CA, and AUTH with the password kept out of
 * every error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "replyfx.h"
#include "scoring/store/config.h"
#include "bot/cmd/schema.h"

/* Reply to p (a dry run when dry) and expect status; the reply is dropped. */
static void reply_expect(const struct smtp_opts *o, const struct patch *p,
			 const struct reply_in *in, int dry,
			 enum reply_status want)
{
	struct reply_out out;

	assert_int_equal(reply_for_patch(&out, E.pol, o, E.db, p, in, dry), 0);
	assert_int_equal(out.status, want);
	reply_out_clear(&out);
}

/* The outbox row of dedupe key key is in state want. */
static void assert_row_state(const char *key, const char *want)
{
	char *st = rfx_outbox_field(key, "state");

	assert_non_null(st);
	assert_string_equal(st, want);
	free(st);
}

/* ---- 2. never twice -------------------------------------------------- */

static void test_not_sent_twice(void **state)
{
	struct patch *p = rfx_load("acme-v2-2.eml");
	struct reply_in in = rfx_risk_in(0.42);
	struct reply_out out;
	struct smtp_opts o;
	char *first = NULL;

	(void)state;
	rfx_smtp_opts(&o, "plain");
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0), 0);
	assert_int_equal(out.status, REPLY_SENT);
	first = strdup(out.message_id);
	reply_out_clear(&out);

	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0), 0);
	assert_int_equal(out.status, REPLY_ALREADY);
	assert_string_equal(out.message_id, first);
	reply_out_clear(&out);
	/* a dry run says so too */
	reply_expect(&o, p, &in, 1, REPLY_ALREADY);
	/* another probability is the same reply (patch, model, kind) */
	in.probability = 0.9;
	reply_expect(&o, p, &in, 0, REPLY_ALREADY);

	assert_int_equal(smtpsim_count(&E.plain), 1);
	assert_row_state(first, "sent");
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
					     built.message, &id),
			 0);
	if (state != OUTBOX_INTENDED)
		assert_int_equal(store_outbox_set(E.db, id, state, NULL, NULL),
				 0);
	*out = built;
}

static void test_sending_row_not_resent(void **state)
{
	struct patch *p = rfx_load("acme-v2-2.eml");
	struct reply_in in = rfx_risk_in(0.42);
	struct reply_out built, out;
	struct smtp_opts o;

	(void)state;
	rfx_smtp_opts(&o, "plain");
	crash_left(OUTBOX_SENDING, &built, p, &in);
	reply_expect(&o, p, &in, 0, REPLY_ALREADY);
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0), 0);
	assert_int_equal(out.status, REPLY_ALREADY);
	assert_int_equal(smtpsim_count(&E.plain), 0);
	assert_row_state(built.message_id, "sending");
	reply_out_clear(&out);
	reply_out_clear(&built);
	smtp_opts_clear(&o);
	patch_free(p);
}

static void test_intended_row_sent_once(void **state)
{
	struct patch *p = rfx_load("acme-v2-2.eml");
	struct reply_in in = rfx_risk_in(0.42);
	struct reply_out built;
	struct smtp_opts o;
	char *msg, *env, *v;
	int n;

	(void)state;
	rfx_smtp_opts(&o, "plain");
	crash_left(OUTBOX_INTENDED, &built, p, &in);
	reply_expect(&o, p, &in, 0, REPLY_SENT);
	reply_expect(&o, p, &in, 0, REPLY_ALREADY);

	/* exactly the recorded message went out, once */
	rfx_one_message(&E.plain, &msg, &env);
	v = rfx_header(msg, "Message-ID", &n);
	assert_int_equal(n, 1);
	assert_non_null(strstr(v, built.message_id));
	assert_string_equal(msg, built.message);
	assert_row_state(built.message_id, "sent");
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
	char *id = rfx_expected_msgid(PATCH_ID, MODEL, "risk");
	char *st = rfx_outbox_field(id, "state");

	free(id);
	return st;
}

/* The risk reply's outbox row is in state want. */
static void assert_risk_row(const char *want)
{
	char *id = rfx_expected_msgid(PATCH_ID, MODEL, "risk");

	assert_row_state(id, want);
	free(id);
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

static void kill_sender(enum kill_at at)
{
	struct patch *p = rfx_load("acme-v2-2.eml");
	struct reply_in in = rfx_risk_in(0.42);
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

	rfx_smtp_opts(&o, "plain");
	free(o.url);
	o.url = strdup(rfx_pathf("smtp://127.0.0.1:%d", ntohs(sa.sin_port)));
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct db *cdb = NULL;

		close(lfd);
		if (db_open(&cdb, rfx_pathf("%s/state-%d.db", E.dir, E.ndb),
			    &bot_db_owners))
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
	smtp_opts_clear(&o);
	patch_free(p);
}

/* The reply goes out now, once, and a second try finds it sent. */
static void sent_once_now(struct patch *p, const struct reply_in *in)
{
	struct smtp_opts o;

	rfx_smtp_opts(&o, "plain");
	reply_expect(&o, p, in, 0, REPLY_SENT);
	reply_expect(&o, p, in, 0, REPLY_ALREADY);
	assert_int_equal(smtpsim_count(&E.plain), 1);
	assert_risk_row("sent");
	smtp_opts_clear(&o);
}

static void test_killed_before_data_sent_once(void **state)
{
	struct patch *p = rfx_load("acme-v2-2.eml");
	struct reply_in in = rfx_risk_in(0.42);

	(void)state;
	kill_sender(KILL_BEFORE_GREETING);
	assert_risk_row("intended");

	sent_once_now(p, &in);
	patch_free(p);
}

static void test_killed_after_data_not_resent(void **state)
{
	struct patch *p = rfx_load("acme-v2-2.eml");
	struct reply_in in = rfx_risk_in(0.42);
	struct outbox_row row;
	struct reply_out out;
	struct smtp_opts o;

	(void)state;
	kill_sender(KILL_AFTER_DATA);
	assert_risk_row("sending");

	rfx_smtp_opts(&o, "plain");
	assert_int_equal(reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0), 0);
	assert_int_equal(out.status, REPLY_ALREADY);
	assert_int_equal(store_outbox_get(E.db, out.message_id, &row), 0);
	assert_int_equal(reply_resend(E.pol, &o, E.db, &row), PT_EINVAL);
	assert_int_equal(smtpsim_count(&E.plain), 0);
	assert_risk_row("sending");
	outbox_row_clear(&row);
	reply_out_clear(&out);
	smtp_opts_clear(&o);
	patch_free(p);
}

/*
 * The server's answer to the final dot: a 4yz means the message was not
 * accepted (RFC 5321 4.2.5), so the row goes back to 'intended' and the
 * next try sends it once; a 5yz refuses it for good (failed, said so);
 * a connection dropped with no answer may have delivered it, so it is
 * never sent again.
 */
static void serve_after_dot(int lfd, const char *answer)
{
	char line[1024];
	FILE *in;
	int fd;

	alarm(10); /* the child never outlives a stuck test */
	fd = accept(lfd, NULL, NULL);
	if (fd < 0 || play_server_to_data(fd))
		_exit(1);
	in = fdopen(dup(fd), "r");
	while (in && fgets(line, sizeof(line), in) && strcmp(line, ".\r\n"))
		;
	if (!answer)
		_exit(0); /* dropped: no answer to the dot */
	if (write(fd, answer, strlen(answer)) < 0)
		_exit(1);
	while (fgets(line, sizeof(line), in))
		if (!strncasecmp(line, "QUIT", 4) &&
		    write(fd, "221 bye\r\n", 9) == 9)
			break;
	_exit(0);
}

static int send_answered(const char *answer)
{
	struct patch *p = rfx_load("acme-v2-2.eml");
	struct reply_in in = rfx_risk_in(0.42);
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	struct reply_out out;
	struct smtp_opts o;
	pid_t pid;
	int lfd, rc, status;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(lfd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		serve_after_dot(lfd, answer);
	close(lfd);
	rfx_smtp_opts(&o, "plain");
	free(o.url);
	o.url = strdup(rfx_pathf("smtp://127.0.0.1:%d", ntohs(sa.sin_port)));
	o.timeout = 10;
	rc = reply_for_patch(&out, E.pol, &o, E.db, p, &in, 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	reply_out_clear(&out);
	smtp_opts_clear(&o);
	patch_free(p);
	return rc;
}

static void test_4yz_after_dot_retried(void **state)
{
	struct patch *p = rfx_load("acme-v2-2.eml");
	struct reply_in in = rfx_risk_in(0.42);

	(void)state;
	assert_int_equal(send_answered("451 4.3.0 try again later\r\n"),
			 PT_EAGAIN);
	assert_non_null(strstr(pt_error_last(), "451"));
	assert_risk_row("intended");

	sent_once_now(p, &in);
	patch_free(p);
}

/* a 5yz to the dot: refused for good, said so, never sent again */
static void test_5yz_after_dot_refused(void **state)
{
	struct patch *p = rfx_load("acme-v2-2.eml");
	struct reply_in in = rfx_risk_in(0.42);
	struct smtp_opts o;

	(void)state;
	assert_int_equal(send_answered("554 5.7.1 rejected by policy\r\n"),
			 PT_ERROR);
	assert_non_null(strstr(pt_error_last(), "554"));
	assert_non_null(strstr(pt_error_last(), "refused for good"));
	assert_null(strstr(pt_error_last(), "may have been sent"));
	assert_risk_row("failed");

	rfx_smtp_opts(&o, "plain");
	reply_expect(&o, p, &in, 0, REPLY_ALREADY);
	assert_int_equal(smtpsim_count(&E.plain), 0);
	smtp_opts_clear(&o);
	patch_free(p);
}

static void test_drop_after_dot_not_resent(void **state)
{
	struct patch *p = rfx_load("acme-v2-2.eml");
	struct reply_in in = rfx_risk_in(0.42);
	struct smtp_opts o;
	char *st;

	(void)state;
	assert_int_equal(send_answered(NULL), PT_ENET);
	st = row_state();
	assert_non_null(st);
	assert_string_not_equal(st, "intended");
	free(st);

	rfx_smtp_opts(&o, "plain");
	reply_expect(&o, p, &in, 0, REPLY_ALREADY);
	assert_int_equal(smtpsim_count(&E.plain), 0);
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
	assert_int_equal(db_prepare(&st, E.db,
				    "SELECT last_error FROM"
				    " outbox WHERE dedupe_key = ?"),
			 0);
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
	struct patch *p = rfx_load("acme-v2-2.eml");
	struct reply_in in = rfx_risk_in(0.42);
	struct resend_ctx c = { NULL, 0, 0 };
	struct reply_out out;
	struct smtp_opts down, o;
	char *msg, *env, *from, *rcpts, *id;

	(void)state;
	rfx_smtp_opts(&down, "plain");
	free(down.url);
	/* nothing listens on port 1 of loopback: connection refused */
	down.url = strdup("smtp://127.0.0.1:1");
	assert_int_equal(reply_for_patch(&out, E.pol, &down, E.db, p, &in, 0),
			 PT_EAGAIN);
	reply_out_clear(&out);
	id = rfx_expected_msgid(PATCH_ID, MODEL, "risk");
	assert_row_state(id, "intended");

	rfx_smtp_opts(&o, "plain");
	c.o = &o;
	assert_int_equal(store_outbox_foreach(E.db, OUTBOX_INTENDED, resend_cb,
					      &c),
			 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.rc, 0);
	c.n = 0;
	assert_int_equal(store_outbox_foreach(E.db, OUTBOX_INTENDED, resend_cb,
					      &c),
			 0);
	assert_int_equal(c.n, 0);
	reply_expect(&o, p, &in, 0, REPLY_ALREADY);

	rfx_one_message(&E.plain, &msg, &env);
	rcpts = rfx_env_rcpts(env, &from);
	assert_string_equal(from, "bot@pt.example");
	assert_string_equal(rcpts, "alice@maint.example, bob@rev.example, "
				   "dave@net.example, netdev@vger.kernel.org, "
				   "rene.mueller@example.de");
	assert_row_state(id, "sent");
	free(rcpts);
	free(from);
	free(msg);
	free(env);
	free(id);
	smtp_opts_clear(&down);
	smtp_opts_clear(&o);
	patch_free(p);
}

/*
 * A relay that refuses one recipient (a maintainer who left) must not
 * stop the reply to everyone else.
 */
static void test_refused_recipient_others_get_it(void **state)
{
	static char *with_dead[] = { "author", "list", DEAD_ADDRESS, NULL };
	struct patch *p = rfx_load("acme-v2-2.eml");
	struct reply_in in = rfx_risk_in(0.42);
	const struct policy_subsys *s = NULL;
	struct reply_out out;
	char **saved, *msg, *env, *from, *rcpts;

	(void)state;
	assert_int_equal(policy_match(E.pol, p, NULL, &s), 0);
	saved = s->recipients;
	((struct policy_subsys *)s)->recipients = with_dead;
	rfx_sent_one(&out, p, &in, &msg, &env);
	((struct policy_subsys *)s)->recipients = saved;
	rcpts = rfx_env_rcpts(env, &from);
	assert_string_equal(rcpts, "netdev@vger.kernel.org, "
				   "rene.mueller@example.de");
	/* the refusal is kept, with the server's answer, not dropped */
	assert_non_null(out.refused);
	assert_non_null(strstr(out.refused, "'" DEAD_ADDRESS "' (550"));
	assert_string_equal(outbox_error(out.message_id),
			    "sent; recipients refused: "
			    "'" DEAD_ADDRESS "' (550 5.1.1 <" DEAD_ADDRESS
			    ">: mailbox "
			    "unavailable)");
	free(rcpts);
	free(from);
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
	static const char msg_text[] = "From: bot@pt.example\r\n"
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
	rfx_smtp_opts(&o, "plain");
	assert_int_equal(smtp_send(&o, "bot@pt.example", rcpts, msg_text,
				   strlen(msg_text)),
			 0);
	rfx_one_message(&E.plain, &msg, &env);
	assert_string_equal(msg, msg_text);
	to = rfx_env_rcpts(env, &from);
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
		assert_int_equal(rfx_write_conf("bad", c[i].smtp), 0);
		assert_int_equal(config_open(&cfg,
					     rfx_pathf("%s/bad.conf", E.dir)),
				 0);
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
	struct patch *p = rfx_load("acme-v2-2.eml");
	struct reply_in in = rfx_risk_in(0.42);
	struct smtp_opts o;
	int rc;

	rfx_smtp_opts(&o, conf);
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
	err = rfx_outbox_field(id, "coalesce(last_error, '')");
	assert_null(strstr(err, WRONG_PASSWORD));
	st = rfx_outbox_field(id, "state");
	assert_string_equal(st, "sent");
	rfx_one_message(&E.starttls, &msg, &env);
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
	rfx_one_message(&E.smtps, &msg, &env);
	rfx_assert_header(msg, "In-Reply-To", "<" PATCH_ID ">");
	free(msg);
	free(env);
	reply_out_clear(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, rfx_setup, rfx_teardown)
		T(test_not_sent_twice),
		T(test_sending_row_not_resent),
		T(test_intended_row_sent_once),
		T(test_killed_before_data_sent_once),
		T(test_killed_after_data_not_resent),
		T(test_4yz_after_dot_retried),
		T(test_5yz_after_dot_refused),
		T(test_drop_after_dot_not_resent),
		T(test_server_down_then_resent_once),
		T(test_refused_recipient_others_get_it),
		T(test_smtp_send_dot_lines_intact),
		T(test_smtp_config_errors),
		T(test_starttls_verified_and_auth),
		T(test_starttls_required),
		T(test_smtps_verified),
#undef T
	};

	return cmocka_run_group_tests(tests, rfx_group_setup,
				      rfx_group_teardown);
}
