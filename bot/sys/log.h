/*
 * log.h - the daemon's log: levels, stderr or syslog, and redaction.  The
 * bot (not the scoring library) logs what it did and why; every line
 * passes through a filter that replaces each registered secret (tokens,
 * passwords) with "***", so a secret that slips into a message by
 * mistake still never reaches a log.
 */
#ifndef PT_LOG_H
#define PT_LOG_H

enum log_level { LOG_LVL_ERROR = 0, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

enum log_target { LOG_TO_STDERR = 0, LOG_TO_SYSLOG };

void log_setup(enum log_target target, enum log_level max_level);
enum log_level log_get_level(void);
/* Remember a secret to redact (copied; at most 16 are kept). */
void log_register_secret(const char *secret);
void log_forget_secrets(void);
void log_msg(enum log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

/* Redact registered secrets in s in place (exposed for tests). */
void log_redact(char *s);

#endif
