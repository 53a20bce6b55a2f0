/*
 * pwsim.h - start and drive tests/lib/pw_standin.py (the Patchwork
 * stand-in) from C unit tests: a child process on a free loopback port,
 * a private temporary directory with its request log, the control
 * endpoint for faults and new mail; a test group's main() and a client.
 */
#ifndef PT_PWSIM_H
#define PT_PWSIM_H

#include <stddef.h>

struct pwsim {
	int pid;
	int port;
	char url[64];	  /* "http://127.0.0.1:PORT" */
	char dir[256];	  /* temporary directory (removed by pwsim_stop) */
	char record[300]; /* the stand-in's request log (JSON lines) */
};

/*
 * Start the stand-in on DATADIR (NULL: tests/data/pw).  Returns 0, or 77
 * when python3 or the stand-in cannot be found (skip), or -1.
 */
int pwsim_start(struct pwsim *s, const char *datadir);
void pwsim_stop(struct pwsim *s);
/* POST json to /__control__; 0 on a 200 answer. */
int pwsim_control(struct pwsim *s, const char *json);
/* Import a mail file (path relative to tests/data/ or absolute). */
int pwsim_import(struct pwsim *s, const char *eml_path);
/* The request log as one string (free it); "" when empty. */
char *pwsim_log(struct pwsim *s);
/* Number of logged requests whose "METHOD path" contains needle. */
int pwsim_count(struct pwsim *s, const char *method, const char *needle);
/* tests/data directory (from PT_SOURCE_DIR or this file's path). */
const char *pwsim_data_dir(void);
/*
 * Wait up to 10 s for the child *pid to write the port it listens on to
 * portfile (the stand-in's and the SMTP sink's --port-file).  Returns
 * the port, or -1 when the time is up or the child exited (then *pid is
 * 0).
 */
int pwsim_wait_port(int *pid, const char *portfile);

struct pw;
/*
 * A Patchwork client of the stand-in's project 'test' with TOKEN (NULL:
 * anonymous), PER_PAGE (0: the server's) and descriptions capped at
 * DESC_MAX bytes; quick retries, a 3 s timeout.  NULL on failure.
 */
struct pw *pwsim_client(const struct pwsim *s, const char *token,
			unsigned per_page, size_t desc_max);

struct CMUnitTest;
/*
 * A test program's main(): start the stand-in on DATADIR (NULL: the
 * default data), run the cmocka group, stop it.  Returns the group's
 * result, 77 (skip) when the stand-in cannot be found, 1 when it does
 * not start.  PWSIM_MAIN(s, tests) passes the array and its length.
 */
int pwsim_run_tests(struct pwsim *s, const char *datadir, const char *name,
		    const struct CMUnitTest *tests, size_t n);
#define PWSIM_MAIN(s, tests)                    \
	pwsim_run_tests(s, NULL, #tests, tests, \
			sizeof(tests) / sizeof((tests)[0]))

#endif
