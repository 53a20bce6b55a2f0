/*
 * policy.h - who opted in to what.  Each [subsystem "NAME"] section of
 * the configuration opts one subsystem in: which patches are its (list
 * id, Patchwork project, MAINTAINERS entry names, path globs), what the
 * bot may do there (actions = check reply), from which estimate on
 * (risk-threshold, stable-threshold), to whom replies go (recipients =
 * author list maintainers, or addresses; list = the list's address) and
 * how often (rate-limit, actions per hour, counted in the outbox),
 * whether a reply waits for a maintainer's approval (reply-mode = auto |
 * approve, default reply.mode) or for embargo-hours (default
 * reply.embargo-hours, 0) before it goes out.  A
 * patch that matches no section gets nothing.
 */
#ifndef PT_POLICY_H
#define PT_POLICY_H

#include <stdint.h>

#include "scoring/store/config.h"
#include "scoring/store/db.h"
#include "scoring/history/maintainers.h"
#include "scoring/patch/patch.h"

enum { POLICY_CHECK = 1, POLICY_REPLY = 2 };
enum policy_mode { POLICY_AUTO = 0, POLICY_APPROVE };

struct policy_subsys {
	char *name;
	char *list_id;	    /* "linux-pwm.vger.kernel.org" */
	char *list_address; /* "linux-pwm@vger.kernel.org" */
	char *pw_project;
	char **maint_names; /* MAINTAINERS entry names (multivar) */
	char **paths;	    /* path globs (multivar) */
	unsigned actions;
	double risk_threshold;
	double stable_threshold;
	char **recipients; /* "author", "list", "maintainers", addresses */
	long rate_limit;   /* actions per hour per kind; 0: none */
	enum policy_mode reply_mode; /* reply-mode, else reply.mode */
	long embargo_hours; /* embargo-hours, else reply.embargo-hours */
	char conf_hash[17]; /* of the section as read: a mute-list holds
			       while this stays the same */
};

struct policy {
	struct policy_subsys *s;
	size_t n;
	struct maint *maint; /* policy.maintainers-file, or NULL */
	char *from;	     /* reply.from: "patchtriage <bot@example.org>" */
	char *contact;	     /* reply.contact, may be NULL */
	char *templates;     /* reply.templates: the templates/ folder */
	char *msgid_domain;  /* reply.msgid-domain, else From's domain */
	int dry_run;	     /* policy.dry-run */
};

int policy_load(struct policy **out, struct config *cfg);
void policy_free(struct policy *p);

/*
 * The opted-in subsystem a patch belongs to: the first section whose
 * list id equals the patch's List-Id, whose Patchwork project is
 * pw_project (may be NULL), or one of whose MAINTAINERS entries or path
 * globs covers a file the patch touches.  PT_ENOTFOUND when none.
 */
int policy_match(const struct policy *p, const struct patch *pt,
		 const char *pw_project, const struct policy_subsys **out);

/* Whether another action of kind fits in the subsystem's hourly limit. */
int policy_rate_ok(const struct policy_subsys *s, struct db *db,
		   const char *kind, int64_t now, int *ok);

/*
 * The outbox kind of an action a dry run (run --dry-run, policy.dry-run)
 * only reports: POLICY_DRY_PREFIX and the real kind ("dry-reply-risk").
 * Never sent, never counted as sent by `status`.
 */
#define POLICY_DRY_PREFIX "dry-"

/*
 * policy_rate_ok() for a dry run: the actions it reported (kind
 * "dry-" KIND) count with those really sent, so that a dry run is rate
 * limited where the real run would be.
 */
int policy_rate_ok_dry(const struct policy_subsys *s, struct db *db,
		       const char *kind, int64_t now, int *ok);

/*
 * Recipients of a reply: To (the author) and Cc (list, maintainers of
 * the touched files, other addresses), NULL-terminated, de-duplicated,
 * bare addresses.  Free with config_strv_free().
 */
int policy_recipients(const struct policy *p, const struct policy_subsys *s,
		      const struct patch *pt, char ***to, char ***cc);

/*
 * Whether email (any case) is an M: or R: person of a MAINTAINERS entry
 * (policy.maintainers-file, not THE REST) covering a file pt touches.
 */
int policy_is_maintainer(const struct policy *p, const struct patch *pt,
			 const char *email);

#endif
