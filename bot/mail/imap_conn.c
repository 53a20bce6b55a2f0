/*
 * imap_conn.c - the IMAP connection: imaps:// or STARTTLS, the TLS
 * verification (libetpan does not verify, so the peer's chain is
 * checked here with GnuTLS against imap.ca-file or the system store,
 * host name included, before any credential is sent), LOGIN or
 * AUTHENTICATE PLAIN, and the mapping of libetpan's errors.
 */
#include "bot/mail/imap.h"

#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <libetpan/libetpan.h>
#include <stdlib.h>
#include <string.h>

#include "bot/mail/imap_int.h"

#define IMAP_MAX_CHAIN 16

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
		r = gnutls_x509_trust_list_add_trust_file(*tl, ca_file, NULL,
							  GNUTLS_X509_FMT_PEM,
							  0, 0);
	else
		r = gnutls_x509_trust_list_add_system_trust(*tl, 0, 0);
	if (r <= 0)
		return pt_error_set(PT_EINVAL,
				    "imap: no CA certificates in "
				    "'%s'",
				    ca_file ? ca_file : "system store");
	return 0;
}

static int verify_status(const struct imap_opts *o, unsigned status)
{
	gnutls_datum_t txt = { NULL, 0 };
	int rc;

	if (!status)
		return 0;
	gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509,
						     &txt, 0);
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
		return pt_error_set(PT_EAUTH,
				    "imap '%s': no server certificate",
				    s->o->host);
	}
	rc = load_trust(&tl, s->o->ca_file);
	for (i = 0; !rc && i < carray_count(chain) && i < IMAP_MAX_CHAIN; i++) {
		MMAPString *der = carray_get(chain, i);
		gnutls_datum_t d = { (unsigned char *)der->str,
				     (unsigned)der->len };

		if (gnutls_x509_crt_init(&crt[n]) < 0) {
			rc = PT_ENOMEM;
			break;
		}
		if (gnutls_x509_crt_import(crt[n++], &d, GNUTLS_X509_FMT_DER))
			rc = pt_error_set(PT_EAUTH,
					  "imap '%s': bad certificate",
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

int imap_etpan_err(struct imap *s, int r, const char *what)
{
	if (r == MAILIMAP_ERROR_LOGIN || r == MAILIMAP_ERROR_SASL)
		return pt_error_set(PT_EAUTH, "imap '%s': %s refused for '%s'",
				    s->o->host, what, s->o->user);
	return pt_error_set(PT_ENET,
			    "imap '%s:%u': %s failed (libetpan "
			    "error %d)",
			    s->o->host, s->o->port, what, r);
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
			return imap_etpan_err(s, r, "TLS connect");
		return verify_peer(s);
	}
	r = mailimap_socket_connect(s->h, s->o->host, (uint16_t)s->o->port);
	if (r != MAILIMAP_NO_ERROR_NON_AUTHENTICATED &&
	    r != MAILIMAP_NO_ERROR_AUTHENTICATED)
		return imap_etpan_err(s, r, "connect");
	if (!s->o->starttls)
		return 0;
	r = mailimap_socket_starttls_with_callback(s->h, tls_setup, s);
	if (r != MAILIMAP_NO_ERROR)
		return imap_etpan_err(s, r, "STARTTLS");
	return verify_peer(s);
}

static int do_login(struct imap *s)
{
	struct mailimap_capability_data *cap = NULL;
	int r;

	if (s->o->auth == IMAP_AUTH_PLAIN)
		r = mailimap_authenticate(s->h, "PLAIN", s->o->host, NULL, NULL,
					  s->o->user, s->o->user,
					  s->o->password, NULL);
	else
		r = mailimap_login(s->h, s->o->user, s->o->password);
	if (r != MAILIMAP_NO_ERROR)
		return imap_etpan_err(s, r,
				      s->o->auth == IMAP_AUTH_PLAIN
					      ? "AUTHENTICATE PLAIN"
					      : "LOGIN");
	/* capabilities change after login (IDLE is often only listed then) */
	r = mailimap_capability(s->h, &cap);
	if (r != MAILIMAP_NO_ERROR)
		return imap_etpan_err(s, r, "CAPABILITY");
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
