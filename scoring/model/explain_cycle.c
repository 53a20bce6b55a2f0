/*
 * explain_cycle.c - the sentences of the release-cycle columns
 * (proc.rc, proc.late_rc, proc.days_since_tag, proc.days_since_release).
 * They state what the model read: the mainline's newest tag and release
 * when the patch was written (a commit's author date, a mail's Date:),
 * never the release a commit was merged for, which a posted patch cannot
 * know.
 */
#include "scoring/model/explain.h"

#include <math.h>
#include <string.h>

#include "scoring/history/cycle.h"

static const char *verb(const struct feat_vec *v)
{
	return v->from_mail ? "posted" : "authored";
}

/* What a missing column leaves unknown, each its own words. */
static const char *missing(enum feat_id id)
{
	switch (id) {
	case FEAT_RC:
		return "its -rc unknown";
	case FEAT_LATE_RC:
		return "late -rc or not unknown";
	case FEAT_DAYS_TAG:
		return "no days since a tag";
	default:
		return "no days since a release";
	}
}

int explain_cycle(struct buf *b, enum feat_id id, double x,
		  const struct feat_vec *v)
{
	const char *tag = id == FEAT_DAYS_RELEASE ? v->release : v->release_tag;

	if (isnan(x) || !tag)
		return buf_addf(b,
				"no mainline %s known before it was %s "
				"(%s)",
				id == FEAT_DAYS_RELEASE ? "release" : "tag",
				verb(v), missing(id));
	switch (id) {
	case FEAT_RC:
		return buf_addf(b, "%s while the mainline was at %s", verb(v),
				tag);
	case FEAT_LATE_RC:
		return buf_addf(b,
				"%s while the mainline was at %s, %s late "
				"-rc (rc%d or later)",
				verb(v), tag, x > 0 ? "a" : "not a",
				CYCLE_LATE_RC);
	case FEAT_DAYS_TAG:
		if (!v->release || strcmp(v->release, tag))
			return buf_addf(b,
					"%s %.1f days after the mainline's %s "
					"tag",
					verb(v), x, tag);
		/* the newest tag is the release: one fact, one sentence */
		/* fall through */
	case FEAT_DAYS_RELEASE:
		return buf_addf(b,
				"%s %.1f days after the mainline's %s "
				"release",
				verb(v), x, tag);
	default:
		return PT_EINVAL;
	}
}
