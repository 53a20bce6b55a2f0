/*
 * hold.c - the end of a reply's embargo (see hold.h): dropped when the
 * thread moved on, released to the flush otherwise.
 */
#include "bot/loop/hold.h"

#include <stdlib.h>
#include <string.h>

#include "bot/sys/log.h"
#include "bot/outbox/store.h"

struct due {
	int64_t *ids;
	size_t n;
	int64_t now;
};

static int collect_due(const struct outbox_row *r, void *ctx)
{
	struct due *d = ctx;
	int64_t *v;

	if (!r->hold || strcmp(r->hold, "embargo") || r->release_at > d->now)
		return 0;
	v = realloc(d->ids, (d->n + 1) * sizeof(*v));
	if (!v)
		return PT_ENOMEM;
	d->ids = v;
	d->ids[d->n++] = r->id;
	return 0;
}

/* The bare address of reply.from, for not counting the bot's own mail. */
static char *bot_addr(const struct policy *pol)
{
	const char *a = pol->from, *lt, *gt;

	if (!a)
		return NULL;
	lt = strchr(a, '<');
	gt = lt ? strchr(lt, '>') : NULL;
	return lt && gt ? pt_strndup(lt + 1, (size_t)(gt - lt - 1))
			: pt_strdup(a);
}

static int release_one(struct db *db, struct lookup *lk, const char *bot,
		       int64_t id, struct hold_stats *st)
{
	struct outbox_row r;
	struct buf why = BUF_INIT;
	char *who = NULL;
	int newer = 0, rc;

	rc = store_outbox_by_id(db, id, &r);
	if (!rc && r.about && lk)
		rc = lookup_thread_news(lk, r.about, r.created, bot, &newer,
					&who);
	if (!rc && newer)
		rc = buf_addf(&why, "dropped: a newer version of the series "
				    "arrived during the embargo");
	else if (!rc && who)
		rc = buf_addf(&why,
			      "dropped: %s replied in the thread during "
			      "the embargo",
			      who);
	if (!rc && why.len) {
		rc = store_outbox_release(db, id, OUTBOX_DROPPED, NULL,
					  why.ptr);
		st->dropped += !rc;
		log_info("reply <%s> %s", r.dedupe_key, why.ptr);
	} else if (!rc) {
		rc = store_outbox_release(db, id, OUTBOX_INTENDED, NULL, NULL);
		st->released += !rc;
		log_info("reply <%s>: embargo over, sending", r.dedupe_key);
	}
	outbox_row_clear(&r);
	buf_free(&why);
	free(who);
	return rc;
}

int hold_release_due(struct db *db, struct lookup *lk, const struct policy *pol,
		     int64_t now, struct hold_stats *st)
{
	struct due d = { NULL, 0, now };
	char *bot = bot_addr(pol);
	size_t i;
	int rc;

	rc = store_outbox_foreach(db, OUTBOX_WAITING, collect_due, &d);
	for (i = 0; !rc && i < d.n; i++)
		rc = release_one(db, lk, bot, d.ids[i], st);
	free(d.ids);
	free(bot);
	return rc;
}
