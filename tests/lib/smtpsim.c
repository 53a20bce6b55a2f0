/*
 * smtpsim.c - the SMTP sink as a child process for unit tests (see
 * smtpsim.h).  The sink picks its own free port and writes it to a file
 * that is polled here, so tests run in parallel; the child is asked to
 * die with the test (PR_SET_PDEATHSIG) so a crashed test leaves no
 * server behind.
 */
#include "smtpsim.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scoring/util/pt.h"
#include "pwsim.h"

int smtpsim_make_cert(const char *dir, const char *name)
{
	struct buf cmd = BUF_INIT;
	int rc;

	/* EC keys: RSA key generation would cost most of a test's budget */
	rc = buf_addf(&cmd,
		      "openssl req -x509 -newkey ec -pkeyopt "
		      "ec_paramgen_curve:prime256v1 -nodes -days 2 "
		      "-keyout '%s/%s-key.pem' -out '%s/%s-cert.pem' "
		      "-subj /CN=localhost -addext "
		      "subjectAltName=DNS:localhost,IP:127.0.0.1 -addext "
		      "basicConstraints=critical,CA:TRUE >/dev/null 2>&1",
		      dir, name, dir, name);
	if (!rc)
		rc = system(cmd.ptr) == 0 ? 0 : -1;
	buf_free(&cmd);
	return rc;
}

static void run_sink(const char *py, const char *script, const char *dir,
		     const char *tls, const char *cert, const char *key,
		     const char *auth, const char *refuse)
{
	char maildir[300], portfile[300];
	const char *argv[20];
	int n = 0;

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	/* the test's output is cmocka's: no "port N", no aiosmtpd warnings */
	if (!freopen("/dev/null", "w", stdout))
		_exit(127);
	setenv("PYTHONWARNINGS", "ignore", 1);
	snprintf(maildir, sizeof(maildir), "%s/mail", dir);
	snprintf(portfile, sizeof(portfile), "%s/port", dir);
	argv[n++] = py;
	argv[n++] = script;
	argv[n++] = "--dir";
	argv[n++] = maildir;
	argv[n++] = "--port-file";
	argv[n++] = portfile;
	argv[n++] = "--tls";
	argv[n++] = tls;
	if (cert && key) {
		argv[n++] = "--cert";
		argv[n++] = cert;
		argv[n++] = "--key";
		argv[n++] = key;
	}
	if (auth) {
		argv[n++] = "--auth";
		argv[n++] = auth;
	}
	if (refuse) {
		argv[n++] = "--refuse";
		argv[n++] = refuse;
	}
	argv[n] = NULL;
	execv(py, (char *const *)argv);
	_exit(127);
}

int smtpsim_spawn(struct smtpsim *s, const char *tls, const char *cert,
		  const char *key, const char *auth, const char *refuse)
{
	char script[1200];
	const char *py = getenv("PT_PYTHON");

	memset(s, 0, sizeof(*s));
	if (!py || !*py)
		py = "/usr/bin/python3";
	/* tests/data/../lib: the source tree as pwsim finds it */
	snprintf(script, sizeof(script), "%s/../lib/smtpsink.py",
		 pwsim_data_dir());
	if (access(py, X_OK) || access(script, R_OK))
		return 77;
	snprintf(s->scheme, sizeof(s->scheme), "%s",
		 strcmp(tls, "smtps") ? "smtp" : "smtps");
	snprintf(s->dir, sizeof(s->dir), "/tmp/pt-smtpsim-XXXXXX");
	if (!mkdtemp(s->dir)) {
		s->dir[0] = '\0';
		return -1;
	}
	fflush(NULL);
	s->pid = fork();
	if (s->pid < 0) {
		s->pid = 0;
		return -1;
	}
	if (s->pid == 0)
		run_sink(py, script, s->dir, tls, cert, key, auth, refuse);
	return 0;
}

int smtpsim_wait(struct smtpsim *s)
{
	char portfile[300];

	snprintf(portfile, sizeof(portfile), "%s/port", s->dir);
	s->port = pwsim_wait_port(&s->pid, portfile);
	if (s->port <= 0)
		return -1;
	snprintf(s->url, sizeof(s->url), "%s://127.0.0.1:%d", s->scheme,
		 s->port);
	return 0;
}

int smtpsim_start(struct smtpsim *s, const char *tls, const char *cert,
		  const char *key, const char *auth, const char *refuse)
{
	int rc = smtpsim_spawn(s, tls, cert, key, auth, refuse);

	return rc ? rc : smtpsim_wait(s);
}

/*
 * Wait for the sink to exit after SIGTERM, at most 10 s: aiosmtpd's
 * controller can hang in its stop under load (seen once under ASan, a
 * test that passed held until its ctest timeout); then SIGKILL.
 */
static void reap_bounded(pid_t pid)
{
	struct timespec ms50 = { 0, 50 * 1000 * 1000 };
	int i;

	for (i = 0; i < 200; i++) {
		if (waitpid(pid, NULL, WNOHANG) != 0)
			return;
		nanosleep(&ms50, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

void smtpsim_stop(struct smtpsim *s)
{
	struct buf cmd = BUF_INIT;

	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		reap_bounded(s->pid);
		s->pid = 0;
	}
	if (s->dir[0] && !strncmp(s->dir, "/tmp/pt-smtpsim-", 16) &&
	    !buf_addf(&cmd, "rm -rf '%s'", s->dir) && system(cmd.ptr) == 0)
		s->dir[0] = '\0';
	buf_free(&cmd);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names in DIR/mail/new, sorted (the sink's names sort by arrival). */
static int list_new(const struct smtpsim *s, char ***out, int *n)
{
	char path[300], **v = NULL, **nv;
	struct dirent *e;
	DIR *d;
	int k = 0;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "%s/mail/new", s->dir);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		nv = realloc(v, (size_t)(k + 1) * sizeof(*v));
		if (!nv || !(nv[k] = strdup(e->d_name))) {
			v = nv ? nv : v;
			break;
		}
		v = nv;
		k++;
	}
	closedir(d);
	if (k)
		qsort(v, (size_t)k, sizeof(*v), by_name);
	*out = v;
	*n = k;
	return 0;
}

static void names_free(char **v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int smtpsim_count(const struct smtpsim *s)
{
	char **v;
	int n;

	if (list_new(s, &v, &n))
		return -1;
	names_free(v, n);
	return n;
}

static char *slurp(const char *dir, const char *sub, const char *name)
{
	struct buf path = BUF_INIT, b = BUF_INIT;
	char *r = NULL;

	if (!buf_addf(&path, "%s/mail/%s/%s", dir, sub, name) &&
	    !pt_read_file(&b, path.ptr, 16u << 20))
		r = buf_detach(&b, NULL);
	buf_free(&path);
	buf_free(&b);
	return r;
}

int smtpsim_message(const struct smtpsim *s, int i, char **msg, char **env)
{
	char **v;
	int n, rc = -1;

	*msg = *env = NULL;
	if (list_new(s, &v, &n))
		return -1;
	if (i >= 0 && i < n) {
		*msg = slurp(s->dir, "new", v[i]);
		*env = slurp(s->dir, "envelope", v[i]);
		rc = *msg && *env ? 0 : -1;
	}
	names_free(v, n);
	if (rc) {
		free(*msg);
		free(*env);
		*msg = *env = NULL;
	}
	return rc;
}

void smtpsim_clear(const struct smtpsim *s)
{
	struct buf path = BUF_INIT;
	char **v;
	int n, i;

	if (list_new(s, &v, &n))
		return;
	for (i = 0; i < n; i++) {
		buf_reset(&path);
		if (!buf_addf(&path, "%s/mail/new/%s", s->dir, v[i]))
			unlink(path.ptr);
		buf_reset(&path);
		if (!buf_addf(&path, "%s/mail/envelope/%s", s->dir, v[i]))
			unlink(path.ptr);
	}
	names_free(v, n);
	buf_free(&path);
}
