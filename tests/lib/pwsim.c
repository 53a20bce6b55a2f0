/*
 * pwsim.c - the Patchwork stand-in as a child process for unit tests
 * (see pwsim.h), with the main() of a test group around it and a client
 * of its project.  The port is chosen by the stand-in (bind port 0) and
 * read back from a file, so tests run in parallel.
 */
#include "pwsim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bot/patchwork/http.h"
#include "bot/patchwork/patchwork.h"
#include "scoring/util/pt.h"

static char source_dir[1024];

static const char *src_dir(void)
{
	const char *env = getenv("PT_SOURCE_DIR");
	char *p;

	if (env && *env)
		return env;
	if (!source_dir[0]) {
		snprintf(source_dir, sizeof(source_dir), "%s", __FILE__);
		p = strstr(source_dir, "/tests/lib/");
		if (p)
			*p = '\0';
		else
			snprintf(source_dir, sizeof(source_dir), ".");
	}
	return source_dir;
}

const char *pwsim_data_dir(void)
{
	static char d[1100];

	snprintf(d, sizeof(d), "%s/tests/data", src_dir());
	return d;
}

static int read_port(const char *path)
{
	char line[32], *end;
	FILE *f = fopen(path, "r");
	long port = 0;

	if (!f)
		return 0;
	if (fgets(line, sizeof(line), f)) {
		errno = 0;
		port = strtol(line, &end, 10);
		/* not (yet) a port: 0, as for no file */
		if (end == line || errno || port < 0 || port > 65535)
			port = 0;
	}
	fclose(f);
	return (int)port;
}

int pwsim_wait_port(int *pid, const char *portfile)
{
	int i, port;

	for (i = 0; i < 400 && *pid > 0; i++) {
		struct timespec ts = { 0, 25 * 1000 * 1000 };

		port = read_port(portfile);
		if (port > 0)
			return port;
		if (waitpid(*pid, NULL, WNOHANG) == *pid) {
			*pid = 0;
			return -1;
		}
		nanosleep(&ts, NULL);
	}
	return -1;
}

int pwsim_start(struct pwsim *s, const char *datadir)
{
	char script[1200], data[1200], portfile[300];
	const char *py = getenv("PT_PYTHON");

	memset(s, 0, sizeof(*s));
	if (!py || !*py)
		py = "/usr/bin/python3";
	snprintf(script, sizeof(script), "%s/tests/lib/pw_standin.py",
		 src_dir());
	if (datadir)
		snprintf(data, sizeof(data), "%s", datadir);
	else
		snprintf(data, sizeof(data), "%s/pw", pwsim_data_dir());
	if (access(py, X_OK) || access(script, R_OK))
		return 77;
	snprintf(s->dir, sizeof(s->dir), "/tmp/pt-pwsim-XXXXXX");
	if (!mkdtemp(s->dir))
		return -1;
	snprintf(portfile, sizeof(portfile), "%s/port", s->dir);
	snprintf(s->record, sizeof(s->record), "%s/requests.jsonl", s->dir);
	s->pid = fork();
	if (s->pid < 0)
		return -1;
	if (s->pid == 0) {
		execl(py, py, script, "--data", data, "--port-file", portfile,
		      "--record", s->record, (char *)NULL);
		_exit(127);
	}
	s->port = pwsim_wait_port(&s->pid, portfile);
	if (s->port <= 0)
		return -1;
	snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%d", s->port);
	return 0;
}

void pwsim_stop(struct pwsim *s)
{
	char path[600];

	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		waitpid(s->pid, NULL, 0);
		s->pid = 0;
	}
	if (s->dir[0]) {
		snprintf(path, sizeof(path), "%s/port", s->dir);
		unlink(path);
		unlink(s->record);
		rmdir(s->dir);
		s->dir[0] = '\0';
	}
}

int pwsim_control(struct pwsim *s, const char *json)
{
	struct http_client *c = NULL;
	struct http_request req;
	struct http_response r;
	char url[128];
	int rc;

	snprintf(url, sizeof(url), "%s/__control__", s->url);
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.url = url;
	req.content_type = "application/json";
	req.body = json;
	req.body_len = strlen(json);
	req.once = 1;
	http_response_init(&r);
	rc = http_client_new(&c, NULL);
	if (!rc)
		rc = http_do(c, &req, &r);
	if (!rc && r.status != 200)
		rc = -1;
	http_response_clear(&r);
	http_client_free(c);
	return rc;
}

int pwsim_import(struct pwsim *s, const char *eml)
{
	struct buf b = BUF_INIT, path = BUF_INIT;
	json_t *o;
	char *js;
	int rc;

	if (eml[0] == '/')
		rc = buf_addstr(&path, eml);
	else
		rc = buf_addf(&path, "%s/%s", pwsim_data_dir(), eml);
	if (!rc)
		rc = pt_read_file(&b, path.ptr, 1 << 20);
	if (rc)
		goto out;
	o = json_pack("{s:s%}", "import", b.ptr, b.len);
	js = o ? json_dumps(o, JSON_COMPACT) : NULL;
	rc = js ? pwsim_control(s, js) : -1;
	free(js);
	json_decref(o);
out:
	buf_free(&b);
	buf_free(&path);
	return rc;
}

char *pwsim_log(struct pwsim *s)
{
	struct buf b = BUF_INIT;

	if (pt_read_file(&b, s->record, 64u << 20)) {
		buf_free(&b);
		return pt_strdup("");
	}
	return buf_detach(&b, NULL);
}

int pwsim_count(struct pwsim *s, const char *method, const char *needle)
{
	char *log = pwsim_log(s), *line, *save = NULL;
	int n = 0;

	if (!log)
		return -1;
	for (line = strtok_r(log, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		json_t *j = json_loads(line, 0, NULL);
		const char *m = json_string_value(json_object_get(j, "method"));
		const char *p = json_string_value(json_object_get(j, "path"));

		if (m && p && (!method || !strcmp(m, method)) &&
		    (!needle || strstr(p, needle)))
			n++;
		json_decref(j);
	}
	free(log);
	return n;
}

int pwsim_run_tests(struct pwsim *s, const char *datadir, const char *name,
		    const struct CMUnitTest *tests, size_t n)
{
	int rc = pwsim_start(s, datadir);

	if (rc == 77)
		return 77;
	if (rc)
		return 1;
	rc = _cmocka_run_group_tests(name, tests, n, NULL, NULL);
	pwsim_stop(s);
	return rc;
}

struct pw *pwsim_client(const struct pwsim *s, const char *token,
			unsigned per_page, size_t desc_max)
{
	struct pw_opts o;
	struct pw *pw = NULL;

	memset(&o, 0, sizeof(o));
	o.url = s->url;
	o.token = token;
	o.project = "test";
	o.per_page = per_page;
	o.description_max = desc_max;
	o.http.backoff_ms = 20;
	o.http.max_backoff_ms = 100;
	o.http.max_attempts = 4;
	o.http.timeout_ms = 3000;
	return pw_new(&pw, &o) ? NULL : pw;
}
