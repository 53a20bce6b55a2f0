/*
 * imap.c - the IMAP reader (see imap.h).  It owns the connection, the
 * TLS verification (libetpan does not verify, so the peer's chain is
 * checked here with GnuTLS against imap.ca-file or the system store,
 * host name included, before any credential is sent) and the per-folder
 * position in imap_folders.  A UIDVALIDITY change restarts the folder
 * from UID 1; the callback's store deduplicates by Message-ID, so what
 * was handled before is not handled again.
 */
#include "bot/mail/imap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <libetpan/libetpan.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bot/sys/log.h"

#define IMAP_DEFAULT_MAX_SIZE (32u << 20)
#define IMAP_MAX_CHAIN 16
#define IMAP_FETCH_BATCH 200          /* UIDs per body fetch */
#define IMAP_FETCH_BATCH_BYTES (16u << 20)

struct imap {
	mailimap *h;
	const struct imap_opts *o;
	char *selected;
};

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

	rc = config_get_int(cfg, "imap.max-message-size",
			    IMAP_DEFAULT_MAX_SIZE, &max);
	if (!rc)
		rc = config_get_int(cfg, "imap.timeout", 60, &o->timeout);
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
		rc = pt_error_set(PT_EINVAL, "config '%s': imap.user is not set",
				  config_path(cfg));
	if (!rc)
		rc = config_read_secret(cfg, "imap", &o->password);
	if (rc == PT_ENOTFOUND)
		rc = pt_error_set(PT_EINVAL,
				  "config '%s': no imap.password-command or "
				  "imap.token-file", config_path(cfg));
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

/* ---- TLS verification ---------------------------------------------- */

static void free_chain(carray *chain)
{
	unsigned i;

	if (!chain)
		return;
	for (i = 0; i < carray_count(chain); i++)
		mmap_string_free(carray_get(chain, i));
	carray_free(chain);
}

static int load_trust(gnutls_x509_trust_list_t *tl, const char *ca_file)
{
	int r;

	if (gnutls_x509_trust_list_init(tl, 0) < 0)
		return PT_ENOMEM;
	if (ca_file)
		r = gnutls_x509_trust_list_add_trust_file(
			*tl, ca_file, NULL, GNUTLS_X509_FMT_PEM, 0, 0);
	else
		r = gnutls_x509_trust_list_add_system_trust(*tl, 0, 0);
	if (r <= 0)
		return pt_error_set(PT_EINVAL, "imap: no CA certificates in "
				    "'%s'", ca_file ? ca_file : "system store");
	return 0;
}

static int verify_status(const struct imap_opts *o, unsigned status)
{
	gnutls_datum_t txt = { NULL, 0 };
	int rc;

	if (!status)
		return 0;
	gnutls_certificate_verification_status_print(
		status, GNUTLS_CRT_X509, &txt, 0);
	rc = pt_error_set(PT_EAUTH, "imap '%s': certificate not trusted: %s",
			  o->host, txt.data ? (char *)txt.data : "?");
	gnutls_free(txt.data);
	return rc;
}

static int verify_peer(struct imap *s)
{
	gnutls_x509_crt_t crt[IMAP_MAX_CHAIN];
	gnutls_x509_trust_list_t tl = NULL;
	gnutls_typed_vdata_st vd;
	carray *chain;
	unsigned i, n = 0, status = 0;
	int rc;

	if (!s->o->ssl_verify)
		return 0;
	chain = mailstream_low_get_certificate_chain(
		mailstream_get_low(s->h->imap_stream));
	if (!chain || !carray_count(chain)) {
		free_chain(chain);
		return pt_error_set(PT_EAUTH, "imap '%s': no server certificate",
				    s->o->host);
	}
	rc = load_trust(&tl, s->o->ca_file);
	for (i = 0; !rc && i < carray_count(chain) && i < IMAP_MAX_CHAIN;
	     i++) {
		MMAPString *der = carray_get(chain, i);
		gnutls_datum_t d = { (unsigned char *)der->str,
				     (unsigned)der->len };

		if (gnutls_x509_crt_init(&crt[n]) < 0) {
			rc = PT_ENOMEM;
			break;
		}
		if (gnutls_x509_crt_import(crt[n++], &d, GNUTLS_X509_FMT_DER))
			rc = pt_error_set(PT_EAUTH, "imap '%s': bad certificate",
					  s->o->host);
	}
	memset(&vd, 0, sizeof(vd));
	vd.type = GNUTLS_DT_DNS_HOSTNAME;
	vd.data = (unsigned char *)s->o->host;
	if (!rc && gnutls_x509_trust_list_verify_crt2(tl, crt, n, &vd, 1, 0,
						      &status, NULL) < 0)
		rc = pt_error_set(PT_EAUTH, "imap '%s': cannot verify",
				  s->o->host);
	if (!rc)
		rc = verify_status(s->o, status);
	for (i = 0; i < n; i++)
		gnutls_x509_crt_deinit(crt[i]);
	if (tl)
		gnutls_x509_trust_list_deinit(tl, 1);
	free_chain(chain);
	return rc;
}

/* ---- connection ---------------------------------------------------- */

static void tls_setup(struct mailstream_ssl_context *c, void *data)
{
	struct imap *s = data;
	struct in6_addr a6;
	struct in_addr a4;

	/* SNI only for names (RFC 6066 forbids IP literals) */
	if (inet_pton(AF_INET, s->o->host, &a4) != 1 &&
	    inet_pton(AF_INET6, s->o->host, &a6) != 1)
		mailstream_ssl_set_server_name(c, s->o->host);
}

static int etpan_err(struct imap *s, int r, const char *what)
{
	if (r == MAILIMAP_ERROR_LOGIN || r == MAILIMAP_ERROR_SASL)
		return pt_error_set(PT_EAUTH, "imap '%s': %s refused for '%s'",
				    s->o->host, what, s->o->user);
	return pt_error_set(PT_ENET, "imap '%s:%u': %s failed (libetpan "
			    "error %d)", s->o->host, s->o->port, what, r);
}

static int do_tls(struct imap *s)
{
	int r;

	if (s->o->implicit_tls) {
		r = mailimap_ssl_connect_with_callback(s->h, s->o->host,
						       (uint16_t)s->o->port,
						       tls_setup, s);
		if (r != MAILIMAP_NO_ERROR_NON_AUTHENTICATED &&
		    r != MAILIMAP_NO_ERROR_AUTHENTICATED)
			return etpan_err(s, r, "TLS connect");
		return verify_peer(s);
	}
	r = mailimap_socket_connect(s->h, s->o->host, (uint16_t)s->o->port);
	if (r != MAILIMAP_NO_ERROR_NON_AUTHENTICATED &&
	    r != MAILIMAP_NO_ERROR_AUTHENTICATED)
		return etpan_err(s, r, "connect");
	if (!s->o->starttls)
		return 0;
	r = mailimap_socket_starttls_with_callback(s->h, tls_setup, s);
	if (r != MAILIMAP_NO_ERROR)
		return etpan_err(s, r, "STARTTLS");
	return verify_peer(s);
}

static int do_login(struct imap *s)
{
	struct mailimap_capability_data *cap = NULL;
	int r;

	if (s->o->auth == IMAP_AUTH_PLAIN)
		r = mailimap_authenticate(s->h, "PLAIN", s->o->host, NULL,
					  NULL, s->o->user, s->o->user,
					  s->o->password, NULL);
	else
		r = mailimap_login(s->h, s->o->user, s->o->password);
	if (r != MAILIMAP_NO_ERROR)
		return etpan_err(s, r, s->o->auth == IMAP_AUTH_PLAIN
					       ? "AUTHENTICATE PLAIN"
					       : "LOGIN");
	/* capabilities change after login (IDLE is often only listed then) */
	r = mailimap_capability(s->h, &cap);
	if (r != MAILIMAP_NO_ERROR)
		return etpan_err(s, r, "CAPABILITY");
	mailimap_capability_data_free(cap);
	return 0;
}

int imap_connect(struct imap **out, const struct imap_opts *o)
{
	struct imap *s;
	int rc;

	*out = NULL;
	s = pt_calloc(1, sizeof(*s));
	if (!s)
		return PT_ENOMEM;
	s->o = o;
	s->h = mailimap_new(0, NULL);
	if (!s->h) {
		free(s);
		return pt_error_set(PT_ENOMEM, "imap: out of memory");
	}
	mailimap_set_timeout(s->h, o->timeout > 0 ? o->timeout : 60);
	rc = do_tls(s);
	if (!rc)
		rc = do_login(s);
	if (rc) {
		imap_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void imap_free(struct imap *s)
{
	if (!s)
		return;
	if (s->h) {
		if (s->h->imap_state != MAILIMAP_STATE_DISCONNECTED &&
		    s->h->imap_stream)
			mailimap_logout(s->h);
		mailimap_free(s->h);
	}
	free(s->selected);
	free(s);
}

int imap_has_idle(const struct imap *s)
{
	return mailimap_has_idle(s->h);
}

/* ---- folder positions ---------------------------------------------- */

static int pos_load(struct db *db, const char *acct, const char *folder,
		    uint32_t *validity, uint32_t *last)
{
	sqlite3_stmt *st;
	int rc;

	*validity = 0;
	*last = 0;
	rc = db_prepare(&st, db,
			"SELECT uidvalidity, last_uid FROM imap_folders "
			"WHERE account = ? AND folder = ?");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, acct, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, folder, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*validity = (uint32_t)sqlite3_column_int64(st, 0);
		*last = (uint32_t)sqlite3_column_int64(st, 1);
		rc = 0;
	} else {
		rc = rc == SQLITE_DONE ? 0 : db_error(db, "imap position");
	}
	sqlite3_finalize(st);
	return rc;
}

static int pos_save(struct db *db, const char *acct, const char *folder,
		    uint32_t validity, uint32_t last)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, db,
			"INSERT INTO imap_folders (account, folder, "
			"uidvalidity, last_uid, updated) VALUES (?,?,?,?,?) "
			"ON CONFLICT(account, folder) DO UPDATE SET "
			"uidvalidity = excluded.uidvalidity, "
			"last_uid = excluded.last_uid, "
			"updated = excluded.updated");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, acct, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, folder, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, validity);
	sqlite3_bind_int64(st, 4, last);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)time(NULL));
	rc = sqlite3_step(st) == SQLITE_DONE ? 0
					     : db_error(db, "imap position");
	sqlite3_finalize(st);
	return rc;
}

/* ---- fetching ------------------------------------------------------ */

struct uid_size {
	uint32_t uid;
	uint32_t size;
};

struct fetched {
	uint32_t uid;
	uint32_t size;
	const char *body;
	size_t body_len;
};

static void msg_att_read(struct mailimap_msg_att *ma, struct fetched *f)
{
	clistiter *it;

	memset(f, 0, sizeof(*f));
	for (it = clist_begin(ma->att_list); it; it = clist_next(it)) {
		struct mailimap_msg_att_item *item = clist_content(it);
		struct mailimap_msg_att_static *a;

		if (item->att_type != MAILIMAP_MSG_ATT_ITEM_STATIC)
			continue;
		a = item->att_data.att_static;
		if (a->att_type == MAILIMAP_MSG_ATT_UID)
			f->uid = a->att_data.att_uid;
		else if (a->att_type == MAILIMAP_MSG_ATT_RFC822_SIZE)
			f->size = a->att_data.att_rfc822_size;
		else if (a->att_type == MAILIMAP_MSG_ATT_BODY_SECTION &&
			 a->att_data.att_body_section) {
			f->body = a->att_data.att_body_section->sec_body_part;
			f->body_len = a->att_data.att_body_section->sec_length;
		}
	}
}

static int cmp_uid(const void *a, const void *b)
{
	const struct uid_size *x = a, *y = b;

	return x->uid < y->uid ? -1 : x->uid > y->uid;
}

/* UID and size of every message above last, sorted by UID. */
static int list_new(struct imap *s, uint32_t last, struct uid_size **out,
		    size_t *n)
{
	struct mailimap_fetch_type *ft;
	struct mailimap_set *set;
	clist *res = NULL;
	clistiter *it;
	struct uid_size *v = NULL, *nv;
	size_t cnt = 0;
	int r, rc = 0;

	*out = NULL;
	*n = 0;
	set = mailimap_set_new_interval(last + 1, 0);
	ft = mailimap_fetch_type_new_fetch_att_list_empty();
	mailimap_fetch_type_new_fetch_att_list_add(ft,
						   mailimap_fetch_att_new_uid());
	mailimap_fetch_type_new_fetch_att_list_add(
		ft, mailimap_fetch_att_new_rfc822_size());
	r = mailimap_uid_fetch(s->h, set, ft, &res);
	mailimap_fetch_type_free(ft);
	mailimap_set_free(set);
	if (r == MAILIMAP_ERROR_FETCH)
		return 0; /* empty folder: "1:*" matches nothing */
	if (r != MAILIMAP_NO_ERROR)
		return etpan_err(s, r, "UID FETCH (sizes)");
	for (it = clist_begin(res); it && !rc; it = clist_next(it)) {
		struct fetched f;

		msg_att_read(clist_content(it), &f);
		/* "N:*" also returns the last message when it is below N */
		if (f.uid <= last)
			continue;
		nv = pt_reallocarray(v, cnt + 1, sizeof(*v));
		if (!nv) {
			rc = PT_ENOMEM;
			break;
		}
		v = nv;
		v[cnt].uid = f.uid;
		v[cnt++].size = f.size;
	}
	mailimap_fetch_list_free(res);
	if (rc) {
		free(v);
		return rc;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_uid);
	*out = v;
	*n = cnt;
	return 0;
}

struct sync {
	struct imap *s;
	struct db *db;
	const char *folder;
	uint32_t validity;
	uint32_t last;
	imap_msg_cb cb;
	void *ctx;
	struct imap_stats *st;
};

static int handle_one(struct sync *y, const struct fetched *f)
{
	int rc;

	rc = y->cb(y->folder, f->uid, f->body, f->body_len, y->ctx);
	if (rc)
		return rc;
	y->st->fetched++;
	y->st->bytes += f->body_len;
	y->last = f->uid;
	return pos_save(y->db, y->s->o->account, y->folder, y->validity,
			y->last);
}

/* Fetch the bodies of v[0..n) (already filtered by size), in UID order. */
static int fetch_bodies(struct sync *y, const struct uid_size *v, size_t n)
{
	struct mailimap_fetch_type *ft;
	struct mailimap_set *set;
	struct fetched *got = NULL;
	clist *res = NULL;
	clistiter *it;
	size_t i, j, cnt = 0;
	int r, rc = 0;

	set = mailimap_set_new_empty();
	for (i = 0; i < n; i++)
		mailimap_set_add_single(set, v[i].uid);
	ft = mailimap_fetch_type_new_fetch_att_list_empty();
	mailimap_fetch_type_new_fetch_att_list_add(ft,
						   mailimap_fetch_att_new_uid());
	mailimap_fetch_type_new_fetch_att_list_add(
		ft, mailimap_fetch_att_new_body_peek_section(
			    mailimap_section_new(NULL)));
	r = mailimap_uid_fetch(y->s->h, set, ft, &res);
	mailimap_fetch_type_free(ft);
	mailimap_set_free(set);
	if (r != MAILIMAP_NO_ERROR)
		return etpan_err(y->s, r, "UID FETCH (bodies)");
	got = pt_calloc(n, sizeof(*got));
	for (it = clist_begin(res); got && it; it = clist_next(it)) {
		struct fetched f;

		msg_att_read(clist_content(it), &f);
		for (j = 0; j < n; j++)
			if (v[j].uid == f.uid && f.body && !got[j].body)
				got[j] = f, cnt++;
	}
	/* in UID order; a message expunged meanwhile is simply gone */
	for (j = 0; got && !rc && j < n; j++)
		if (got[j].body)
			rc = handle_one(y, &got[j]);
	if (!got)
		rc = PT_ENOMEM;
	free(got);
	mailimap_fetch_list_free(res);
	(void)cnt;
	return rc;
}

static int select_folder(struct imap *s, const char *folder)
{
	int r;

	r = mailimap_examine(s->h, folder);
	if (r == MAILIMAP_ERROR_EXAMINE) /* the server said NO */
		return pt_error_set(PT_ENOTFOUND, "imap '%s': the server "
				    "refuses to open folder '%s'; does it "
				    "exist?", s->o->host, folder);
	if (r != MAILIMAP_NO_ERROR)
		return pt_error_set(PT_ENET, "imap '%s': cannot open folder "
				    "'%s' (libetpan error %d)",
				    s->o->host, folder, r);
	free(s->selected);
	s->selected = pt_strdup(folder);
	return s->selected ? 0 : PT_ENOMEM;
}

static int check_validity(struct sync *y)
{
	uint32_t stored, cur;
	int rc;

	cur = y->s->h->imap_selection_info
		      ? y->s->h->imap_selection_info->sel_uidvalidity
		      : 0;
	rc = pos_load(y->db, y->s->o->account, y->folder, &stored, &y->last);
	if (rc)
		return rc;
	y->validity = cur;
	if (stored && stored != cur) {
		log_warn("imap: folder '%s' UIDVALIDITY changed (%u -> %u); "
			 "resyncing, already handled messages are skipped "
			 "by Message-ID",
			 y->folder, stored, cur);
		y->st->resyncs++;
		y->last = 0;
		return pos_save(y->db, y->s->o->account, y->folder, cur, 0);
	}
	if (!stored)
		return pos_save(y->db, y->s->o->account, y->folder, cur,
				y->last);
	return 0;
}

static int sync_list(struct sync *y, const struct uid_size *v, size_t n)
{
	size_t i = 0, start, bytes;
	int rc = 0;

	while (!rc && i < n) {
		if (v[i].size > y->s->o->max_message_size) {
			log_warn("imap: folder '%s' uid %u: %u bytes is over "
				 "imap.max-message-size (%zu); skipped",
				 y->folder, v[i].uid, v[i].size,
				 y->s->o->max_message_size);
			y->st->skipped++;
			y->last = v[i].uid;
			rc = pos_save(y->db, y->s->o->account, y->folder,
				      y->validity, y->last);
			i++;
			continue;
		}
		start = i;
		bytes = 0;
		while (i < n && i - start < IMAP_FETCH_BATCH &&
		       v[i].size <= y->s->o->max_message_size &&
		       (bytes == 0 || bytes + v[i].size <=
					      IMAP_FETCH_BATCH_BYTES))
			bytes += v[i++].size;
		rc = fetch_bodies(y, v + start, i - start);
	}
	return rc;
}

int imap_sync_folder(struct imap *s, struct db *db, const char *folder,
		     imap_msg_cb cb, void *ctx, struct imap_stats *st)
{
	struct imap_stats dummy;
	struct uid_size *v = NULL;
	struct sync y;
	size_t n = 0;
	int rc;

	memset(&dummy, 0, sizeof(dummy));
	memset(&y, 0, sizeof(y));
	y.s = s;
	y.db = db;
	y.folder = folder;
	y.cb = cb;
	y.ctx = ctx;
	y.st = st ? st : &dummy;
	rc = select_folder(s, folder);
	if (!rc)
		rc = check_validity(&y);
	if (!rc)
		rc = list_new(s, y.last, &v, &n);
	if (!rc)
		rc = sync_list(&y, v, n);
	free(v);
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

static int idle_wait(struct imap *s, long timeout,
		     int (*stop)(void), int *changed)
{
	struct pollfd pfd;
	long waited = 0;
	int r, pr = 0;

	r = mailimap_idle(s->h);
	if (r != MAILIMAP_NO_ERROR)
		return etpan_err(s, r, "IDLE");
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
		return etpan_err(s, r, "IDLE DONE");
	return 0;
}

int imap_wait(struct imap *s, long timeout, int (*stop)(void),
	      int *changed)
{
	int r;

	*changed = 0;
	if (s->selected && mailimap_has_idle(s->h))
		return idle_wait(s, timeout, stop, changed);
	sleep_poll(timeout, stop);
	r = mailimap_noop(s->h);
	if (r != MAILIMAP_NO_ERROR)
		return etpan_err(s, r, "NOOP");
	*changed = 1;
	return 0;
}

/* ---- the loop ------------------------------------------------------ */

static int sync_all(struct imap *s, struct db *db, imap_msg_cb cb,
		    void *ctx, struct imap_stats *st)
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
	     void *ctx, int (*stop)(void), long run_for,
	     struct imap_stats *st)
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
