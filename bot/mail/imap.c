/*
 * imap.c - the IMAP reader (see imap.h): its options, the wait on the
 * selected folder (IDLE or polling) and the run loop that reconnects
 * with backoff.  The connection, TLS verification and login are in
 * imap_conn.c, the folder positions and the fetch in imap_sync.c; what
 * they share is in imap_int.h.
 */
#include "bot/mail/imap.h"

#include <errno.h>
#include <libetpan/libetpan.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bot/mail/imap_int.h"
#include "bot/sys/log.h"

#define IMAP_DEFAULT_MAX_SIZE (32u << 20)

/* ---- options ------------------------------------------------------- */

int imap_opts_parse_url(struct imap_opts *o, const char *url)
{
	const char *h, *end, *colon;
	char *e;
	long port;

	if (!strncmp(url, "imaps://", 8)) {
		o->implicit_tls = 1;
		h = url + 8;
	} else if (!strncmp(url, "imap://", 7)) {
		o->implicit_tls = 0;
		h = url + 7;
	} else {
		return pt_error_set(PT_EINVAL,
				    "imap url '%s': not imap:// or imaps://",
				    url);
	}
	end = h + strcspn(h, "/");
	colon = memchr(h, ':', (size_t)(end - h));
	free(o->host);
	o->host = pt_strndup(h, (size_t)((colon ? colon : end) - h));
	if (!o->host)
		return PT_ENOMEM;
	o->port = o->implicit_tls ? 993 : 143;
	if (colon) {
		port = strtol(colon + 1, &e, 10);
		if (e != end || port <= 0 || port > 65535)
			return pt_error_set(PT_EINVAL,
					    "imap url '%s': bad port", url);
		o->port = (unsigned)port;
	}
	if (!*o->host)
		return pt_error_set(PT_EINVAL, "imap url '%s': no host", url);
	return 0;
}

void imap_opts_clear(struct imap_opts *o)
{
	free(o->host);
	free(o->ca_file);
	free(o->user);
	pt_secret_free(o->password);
	config_strv_free(o->folders);
	free(o->account);
	memset(o, 0, sizeof(*o));
}

static int opts_numbers(struct imap_opts *o, struct config *cfg)
{
	long max = 0;
	int rc;

	rc = config_get_int(cfg, "imap.max-message-size", IMAP_DEFAULT_MAX_SIZE,
			    &max);
	if (!rc)
		rc = config_get_int_range(cfg, "imap.timeout", 60, 1,
					  CONFIG_MAX_SECONDS, &o->timeout);
	if (!rc)
		rc = config_get_int(cfg, "imap.idle-restart", 25 * 60,
				    &o->idle_restart);
	if (!rc)
		rc = config_get_int(cfg, "imap.poll-interval", 60,
				    &o->poll_interval);
	if (!rc)
		rc = config_get_int(cfg, "imap.backoff-max", 300,
				    &o->backoff_max);
	if (rc)
		return rc;
	if (max <= 0 || (unsigned long)max > PT_MAX_MAIL_SIZE)
		max = PT_MAX_MAIL_SIZE;
	o->max_message_size = (size_t)max;
	/* RFC 2177: servers may drop an IDLE after 30 minutes */
	if (o->idle_restart <= 0 || o->idle_restart > 29 * 60)
		o->idle_restart = 29 * 60 - 30;
	if (o->poll_interval <= 0)
		o->poll_interval = 60;
	if (o->backoff_max <= 0)
		o->backoff_max = 1;
	return 0;
}

static int opts_auth(struct imap_opts *o, struct config *cfg)
{
	char *a = NULL;
	int rc;

	rc = config_get_string(cfg, "imap.auth", "login", &a);
	if (rc)
		return rc;
	if (!strcasecmp(a, "plain"))
		o->auth = IMAP_AUTH_PLAIN;
	else if (!strcasecmp(a, "login"))
		o->auth = IMAP_AUTH_LOGIN;
	else
		rc = pt_error_set(PT_EINVAL,
				  "config: imap.auth '%s': not login or plain",
				  a);
	free(a);
	return rc;
}

int imap_opts_from_config(struct imap_opts *o, struct config *cfg)
{
	struct buf acct = BUF_INIT;
	char *url = NULL;
	int rc;

	memset(o, 0, sizeof(*o));
	rc = config_get_string(cfg, "imap.url", NULL, &url);
	if (!rc && !url)
		rc = pt_error_set(PT_EINVAL, "config '%s': imap.url is not set",
				  config_path(cfg));
	if (!rc)
		rc = imap_opts_parse_url(o, url);
	if (!rc)
		rc = config_get_string(cfg, "imap.user", NULL, &o->user);
	if (!rc && !o->user)
		rc = pt_error_set(PT_EINVAL,
				  "config '%s': imap.user is not set",
				  config_path(cfg));
	if (!rc)
		rc = config_read_secret(cfg, "imap", &o->password);
	if (rc == PT_ENOTFOUND)
		rc = pt_error_set(PT_EINVAL,
				  "config '%s': no imap.password-command or "
				  "imap.token-file",
				  config_path(cfg));
	if (!rc)
		rc = config_get_string(cfg, "imap.ca-file", NULL, &o->ca_file);
	if (!rc)
		rc = config_get_bool(cfg, "imap.ssl-verify", 1, &o->ssl_verify);
	if (!rc)
		rc = config_get_bool(cfg, "imap.starttls", 1, &o->starttls);
	if (!rc)
		rc = opts_auth(o, cfg);
	if (!rc)
		rc = opts_numbers(o, cfg);
	if (!rc)
		rc = config_get_all(cfg, "imap.folder", &o->folders);
	if (!rc && !o->folders[0]) {
		config_strv_free(o->folders);
		o->folders = pt_calloc(2, sizeof(char *));
		if (!o->folders || !(o->folders[0] = pt_strdup("INBOX")))
			rc = PT_ENOMEM;
	}
	if (!rc)
		rc = buf_addf(&acct, "%s@%s:%u", o->user, o->host, o->port);
	if (!rc)
		o->account = buf_detach(&acct, NULL);
	free(url);
	if (rc)
		imap_opts_clear(o);
	return rc;
}

/* ---- waiting ------------------------------------------------------- */

static int sleep_poll(long timeout, int (*stop)(void))
{
	long i;

	for (i = 0; i < timeout * 10 && !(stop && stop()); i++)
		usleep(100000);
	return 0;
}

static int idle_wait(struct imap *s, long timeout, int (*stop)(void),
		     int *changed)
{
	struct pollfd pfd;
	long waited = 0;
	int r, pr = 0;

	r = mailimap_idle(s->h);
	if (r != MAILIMAP_NO_ERROR)
		return imap_etpan_err(s, r, "IDLE");
	pfd.fd = mailimap_idle_get_fd(s->h);
	pfd.events = POLLIN;
	/* data may already sit in libetpan's buffer */
	if (s->h->imap_stream && s->h->imap_stream->read_buffer_len)
		pr = 1;
	while (!pr && waited < timeout * 1000 && !(stop && stop())) {
		pr = poll(&pfd, 1, 200);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr < 0)
			pr = 0;
		waited += 200;
	}
	*changed = pr > 0;
	if (pr > 0 && (pfd.revents & (POLLHUP | POLLERR)))
		return pt_error_set(PT_ENET, "imap '%s': connection closed",
				    s->o->host);
	r = mailimap_idle_done(s->h);
	if (r != MAILIMAP_NO_ERROR)
		return imap_etpan_err(s, r, "IDLE DONE");
	return 0;
}

int imap_wait(struct imap *s, long timeout, int (*stop)(void), int *changed)
{
	int r;

	*changed = 0;
	if (s->selected && mailimap_has_idle(s->h))
		return idle_wait(s, timeout, stop, changed);
	sleep_poll(timeout, stop);
	r = mailimap_noop(s->h);
	if (r != MAILIMAP_NO_ERROR)
		return imap_etpan_err(s, r, "NOOP");
	*changed = 1;
	return 0;
}

/* ---- the loop ------------------------------------------------------ */

static int sync_all(struct imap *s, struct db *db, imap_msg_cb cb, void *ctx,
		    struct imap_stats *st)
{
	size_t i;
	int rc = 0;

	for (i = 0; !rc && s->o->folders[i]; i++) {
		rc = imap_sync_folder(s, db, s->o->folders[i], cb, ctx, st);
		if (rc == PT_ENOTFOUND) { /* not there (yet): the others */
			log_warn("imap: %s", pt_error_last());
			rc = 0;
		}
	}
	return rc;
}

static int is_net_error(int rc)
{
	return rc == PT_ENET || rc == PT_EAGAIN;
}

static long remaining(time_t end)
{
	time_t now = time(NULL);

	if (!end)
		return 1L << 30;
	return end > now ? (long)(end - now) : 0;
}

int imap_run(const struct imap_opts *o, struct db *db, imap_msg_cb cb,
	     void *ctx, int (*stop)(void), long run_for, struct imap_stats *st)
{
	time_t end = run_for > 0 ? time(NULL) + run_for : 0;
	struct imap *s = NULL;
	long backoff = 1, wait, t;
	int rc = 0, changed, several = o->folders[0] && o->folders[1];

	while (!(stop && stop()) && remaining(end) > 0) {
		if (!s) {
			rc = imap_connect(&s, o);
			if (!rc)
				rc = sync_all(s, db, cb, ctx, st);
		} else {
			wait = several ? o->poll_interval : o->idle_restart;
			t = remaining(end);
			rc = imap_wait(s, wait < t ? wait : t, stop, &changed);
			if (!rc)
				rc = sync_all(s, db, cb, ctx, st);
		}
		if (!rc) {
			backoff = 1;
			continue;
		}
		imap_free(s);
		s = NULL;
		if (!is_net_error(rc))
			return rc; /* auth, TLS trust, the callback: fatal */
		log_warn("imap: %s; reconnecting in %lds", pt_error_last(),
			 backoff);
		t = remaining(end);
		sleep_poll(backoff < t ? backoff : t, stop);
		backoff = backoff * 2 > o->backoff_max ? o->backoff_max
						       : backoff * 2;
		rc = 0;
	}
	imap_free(s);
	return rc;
}
