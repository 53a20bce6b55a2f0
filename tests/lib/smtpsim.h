/*
 * smtpsim.h - the SMTP sink (tests/lib/smtpsink.py, aiosmtpd) as a child
 * process of a C unit test: a private temporary directory holding the
 * Maildir it stores into (DIR/mail/new) and the envelopes it received
 * (DIR/mail/envelope), a free loopback port chosen by the sink, plain
 * SMTP, STARTTLS or SMTPS, and optional AUTH; plus self-signed
 * certificates made with openssl for the tests to trust or not.
 */
#ifndef PT_SMTPSIM_H
#define PT_SMTPSIM_H

struct smtpsim {
	int pid;
	int port;
	char url[64];	/* "smtp://127.0.0.1:PORT" or "smtps://..." */
	char dir[256];	/* temporary directory (removed by smtpsim_stop) */
	char scheme[8]; /* "smtp" or "smtps" */
};

/*
 * A self-signed certificate for 127.0.0.1 and localhost that is its own
 * CA: DIR/NAME-cert.pem and DIR/NAME-key.pem.  0 or -1.
 */
int smtpsim_make_cert(const char *dir, const char *name);

/*
 * Start the sink.  tls: "none", "starttls" or "smtps"; cert and key: PEM
 * files (needed unless tls is "none"); auth: "USER:PASS" or NULL;
 * refuse: an address answered 550 at RCPT TO, or NULL.  Returns 0, 77
 * when python3 or the sink cannot be found (skip), or -1.
 * smtpsim_spawn and smtpsim_wait are the two halves, so that a test can
 * start several sinks at once (python takes a while to come up).
 */
int smtpsim_start(struct smtpsim *s, const char *tls, const char *cert,
		  const char *key, const char *auth, const char *refuse);
int smtpsim_spawn(struct smtpsim *s, const char *tls, const char *cert,
		  const char *key, const char *auth, const char *refuse);
int smtpsim_wait(struct smtpsim *s);
void smtpsim_stop(struct smtpsim *s);

/* Messages stored so far (-1 on error). */
int smtpsim_count(const struct smtpsim *s);
/*
 * The i-th stored message (in the order received) and its envelope
 * ("from ADDR\nto ADDR\n...auth X\n"); free both.  0 or -1.
 */
int smtpsim_message(const struct smtpsim *s, int i, char **msg, char **env);
/* Forget every stored message. */
void smtpsim_clear(const struct smtpsim *s);

#endif
