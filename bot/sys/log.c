/*
 * log.c - levelled logging to stderr (with an ISO 8601 UTC time stamp) or
 * syslog, with secret redaction (see log.h).  Thread-safe: one mutex
 * guards the secret list and the write.
 */
#include "bot/sys/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#define LOG_MAX_SECRETS 16
#define LOG_LINE_MAX 4096

static enum log_target target = LOG_TO_STDERR;
static enum log_level max_level = LOG_LVL_INFO;
static char *secrets[LOG_MAX_SECRETS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const names[] = { "error", "warning", "info", "debug" };

void log_setup(enum log_target t, enum log_level lvl)
{
	target = t;
	max_level = lvl;
	if (t == LOG_TO_SYSLOG)
		openlog("patchtriage", LOG_PID, LOG_DAEMON);
}

enum log_level log_get_level(void)
{
	return max_level;
}

void log_register_secret(const char *s)
{
	int i;

	if (!s || strlen(s) < 4)
		return; /* too short to redact without mangling text */
	pthread_mutex_lock(&lock);
	for (i = 0; i < LOG_MAX_SECRETS; i++) {
		if (secrets[i] && !strcmp(secrets[i], s))
			break;
		if (!secrets[i]) {
			secrets[i] = strdup(s);
			break;
		}
	}
	pthread_mutex_unlock(&lock);
}

void log_forget_secrets(void)
{
	int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < LOG_MAX_SECRETS; i++) {
		if (secrets[i])
			memset(secrets[i], 0, strlen(secrets[i]));
		free(secrets[i]);
		secrets[i] = NULL;
	}
	pthread_mutex_unlock(&lock);
}

/* Caller holds the lock. */
static void redact_locked(char *s)
{
	size_t n, len;
	char *p;
	int i;

	for (i = 0; i < LOG_MAX_SECRETS && secrets[i]; i++) {
		n = strlen(secrets[i]);
		while ((p = strstr(s, secrets[i])) != NULL) {
			len = strlen(p + n);
			memcpy(p, "***", 3);
			memmove(p + 3, p + n, len + 1);
		}
	}
}

void log_redact(char *s)
{
	pthread_mutex_lock(&lock);
	redact_locked(s);
	pthread_mutex_unlock(&lock);
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	char line[LOG_LINE_MAX], stamp[32];
	struct tm tm;
	time_t now;
	va_list ap;

	if (lvl > max_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&lock);
	redact_locked(line);
	if (target == LOG_TO_SYSLOG) {
		syslog(prio[lvl], "%s", line);
	} else {
		now = time(NULL);
		gmtime_r(&now, &tm);
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
		fprintf(stderr, "%s %s: %s\n", stamp, names[lvl], line);
	}
	pthread_mutex_unlock(&lock);
}
