/*
 * imap_sync.c - the sync of one folder: its position (UIDVALIDITY and
 * the last UID handled) in imap_folders, the UID FETCH of the sizes and
 * then, in batches, of the bodies of what is new, each handed to the
 * callback in UID order.  A folder's first sync takes only what arrived
 * (INTERNALDATE) since o->first_since and moves the position over the
 * rest, so a first start reads no backlog and later syncs go on from
 * the folder's end.  A UIDVALIDITY change restarts the folder from UID
 * 1; the callback's store deduplicates by Message-ID, so what was
 * handled before is not handled again.
 */
#include "bot/mail/imap.h"

#include <libetpan/libetpan.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot/mail/imap_int.h"
#include "bot/sys/log.h"

#define IMAP_FETCH_BATCH 200 /* UIDs per body fetch */
#define IMAP_FETCH_BATCH_BYTES (16u << 20)

/* ---- folder positions ---------------------------------------------- */

static int pos_load(struct db *db, const char *acct, const char *folder,
		    uint32_t *validity, uint32_t *last)
{
	sqlite3_stmt *st;
	int rc;

	*validity = 0;
	*last = 0;
	rc = db_prepare(&st, db,
			"SELECT uidvalidity, last_uid FROM imap_folders "
			"WHERE account = ? AND folder = ?");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, acct, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, folder, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*validity = (uint32_t)sqlite3_column_int64(st, 0);
		*last = (uint32_t)sqlite3_column_int64(st, 1);
		rc = 0;
	} else {
		rc = rc == SQLITE_DONE ? 0 : db_error(db, "imap position");
	}
	sqlite3_finalize(st);
	return rc;
}

static int pos_save(struct db *db, const char *acct, const char *folder,
		    uint32_t validity, uint32_t last)
{
	sqlite3_stmt *st;
	int rc;

	rc = db_prepare(&st, db,
			"INSERT INTO imap_folders (account, folder, "
			"uidvalidity, last_uid, updated) VALUES (?,?,?,?,?) "
			"ON CONFLICT(account, folder) DO UPDATE SET "
			"uidvalidity = excluded.uidvalidity, "
			"last_uid = excluded.last_uid, "
			"updated = excluded.updated");
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, acct, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, folder, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, validity);
	sqlite3_bind_int64(st, 4, last);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)time(NULL));
	rc = sqlite3_step(st) == SQLITE_DONE ? 0
					     : db_error(db, "imap position");
	sqlite3_finalize(st);
	return rc;
}

/* ---- fetching ------------------------------------------------------ */

struct uid_size {
	uint32_t uid;
	uint32_t size;
	int old; /* first sync: arrived before first_since */
};

struct fetched {
	uint32_t uid;
	uint32_t size;
	int64_t arrived; /* INTERNALDATE, seconds; 0: not given */
	const char *body;
	size_t body_len;
};

/* An IMAP date-time ("06-Dec-2026 03:19:14 +0100") as seconds, UTC. */
static int64_t date_secs(const struct mailimap_date_time *d)
{
	struct tm tm;
	int z;

	if (!d || d->dt_year < 1970 || d->dt_month < 1 || d->dt_month > 12)
		return 0;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = d->dt_year - 1900;
	tm.tm_mon = d->dt_month - 1;
	tm.tm_mday = d->dt_day;
	tm.tm_hour = d->dt_hour;
	tm.tm_min = d->dt_min;
	tm.tm_sec = d->dt_sec;
	z = d->dt_zone < 0 ? -d->dt_zone : d->dt_zone; /* HHMM */
	z = (z / 100) * 3600 + (z % 100) * 60;
	return (int64_t)timegm(&tm) - (d->dt_zone < 0 ? -z : z);
}

static void msg_att_read(struct mailimap_msg_att *ma, struct fetched *f)
{
	clistiter *it;

	memset(f, 0, sizeof(*f));
	for (it = clist_begin(ma->att_list); it; it = clist_next(it)) {
		struct mailimap_msg_att_item *item = clist_content(it);
		struct mailimap_msg_att_static *a;

		if (item->att_type != MAILIMAP_MSG_ATT_ITEM_STATIC)
			continue;
		a = item->att_data.att_static;
		if (a->att_type == MAILIMAP_MSG_ATT_UID)
			f->uid = a->att_data.att_uid;
		else if (a->att_type == MAILIMAP_MSG_ATT_RFC822_SIZE)
			f->size = a->att_data.att_rfc822_size;
		else if (a->att_type == MAILIMAP_MSG_ATT_INTERNALDATE)
			f->arrived = date_secs(a->att_data.att_internal_date);
		else if (a->att_type == MAILIMAP_MSG_ATT_BODY_SECTION &&
			 a->att_data.att_body_section) {
			f->body = a->att_data.att_body_section->sec_body_part;
			f->body_len = a->att_data.att_body_section->sec_length;
		}
	}
}

static int cmp_uid(const void *a, const void *b)
{
	const struct uid_size *x = a, *y = b;

	return x->uid < y->uid ? -1 : x->uid > y->uid;
}

/*
 * UID and size of every message above last, sorted by UID; with since,
 * each marked old when it arrived before since (or gives no date).
 */
static int list_new(struct imap *s, uint32_t last, int64_t since,
		    struct uid_size **out, size_t *n)
{
	struct mailimap_fetch_type *ft;
	struct mailimap_set *set;
	clist *res = NULL;
	clistiter *it;
	struct uid_size *v = NULL, *nv;
	size_t cnt = 0;
	int r, rc = 0;

	*out = NULL;
	*n = 0;
	set = mailimap_set_new_interval(last + 1, 0);
	ft = mailimap_fetch_type_new_fetch_att_list_empty();
	mailimap_fetch_type_new_fetch_att_list_add(
		ft, mailimap_fetch_att_new_uid());
	mailimap_fetch_type_new_fetch_att_list_add(
		ft, mailimap_fetch_att_new_rfc822_size());
	if (since)
		mailimap_fetch_type_new_fetch_att_list_add(
			ft, mailimap_fetch_att_new_internaldate());
	r = mailimap_uid_fetch(s->h, set, ft, &res);
	mailimap_fetch_type_free(ft);
	mailimap_set_free(set);
	if (r == MAILIMAP_ERROR_FETCH)
		return 0; /* empty folder: "1:*" matches nothing */
	if (r != MAILIMAP_NO_ERROR)
		return imap_etpan_err(s, r, "UID FETCH (sizes)");
	for (it = clist_begin(res); it && !rc; it = clist_next(it)) {
		struct fetched f;

		msg_att_read(clist_content(it), &f);
		/* "N:*" also returns the last message when it is below N */
		if (f.uid <= last)
			continue;
		nv = pt_reallocarray(v, cnt + 1, sizeof(*v));
		if (!nv) {
			rc = PT_ENOMEM;
			break;
		}
		v = nv;
		v[cnt].uid = f.uid;
		v[cnt].old = since && f.arrived < since;
		v[cnt++].size = f.size;
	}
	mailimap_fetch_list_free(res);
	if (rc) {
		free(v);
		return rc;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_uid);
	*out = v;
	*n = cnt;
	return 0;
}

struct sync {
	struct imap *s;
	struct db *db;
	const char *folder;
	uint32_t validity;
	uint32_t last;
	int64_t since; /* the folder's first sync: o->first_since */
	imap_msg_cb cb;
	void *ctx;
	struct imap_stats *st;
};

/*
 * The folder's position after a message, saved as it goes so that a
 * sync cut short (the server gone mid-FETCH) resumes where it was.  A
 * first sync with since saves none before its first step: the backlog
 * (the old messages, which come first in UID order) is passed over in
 * one write (pass_old()) before any new message is handled, so a first
 * sync cut short resumes past it, or, cut before that step, is done
 * again as a first sync.
 */
static int pos_step(struct sync *y)
{
	return pos_save(y->db, y->s->o->account, y->folder, y->validity,
			y->last);
}

static int handle_one(struct sync *y, const struct fetched *f)
{
	int rc;

	rc = y->cb(y->folder, f->uid, f->body, f->body_len, y->ctx);
	if (rc)
		return rc;
	y->st->fetched++;
	y->st->bytes += f->body_len;
	y->last = f->uid;
	return pos_step(y);
}

/* Fetch the bodies of v[0..n) (already filtered by size), in UID order. */
static int fetch_bodies(struct sync *y, const struct uid_size *v, size_t n)
{
	struct mailimap_fetch_type *ft;
	struct mailimap_set *set;
	struct fetched *got = NULL;
	clist *res = NULL;
	clistiter *it;
	size_t i, j, cnt = 0;
	int r, rc = 0;

	set = mailimap_set_new_empty();
	for (i = 0; i < n; i++)
		mailimap_set_add_single(set, v[i].uid);
	ft = mailimap_fetch_type_new_fetch_att_list_empty();
	mailimap_fetch_type_new_fetch_att_list_add(
		ft, mailimap_fetch_att_new_uid());
	mailimap_fetch_type_new_fetch_att_list_add(
		ft, mailimap_fetch_att_new_body_peek_section(
			    mailimap_section_new(NULL)));
	r = mailimap_uid_fetch(y->s->h, set, ft, &res);
	mailimap_fetch_type_free(ft);
	mailimap_set_free(set);
	if (r != MAILIMAP_NO_ERROR)
		return imap_etpan_err(y->s, r, "UID FETCH (bodies)");
	got = pt_calloc(n, sizeof(*got));
	for (it = clist_begin(res); got && it; it = clist_next(it)) {
		struct fetched f;

		msg_att_read(clist_content(it), &f);
		for (j = 0; j < n; j++)
			if (v[j].uid == f.uid && f.body && !got[j].body)
				got[j] = f, cnt++;
	}
	/* in UID order; a message expunged meanwhile is simply gone */
	for (j = 0; got && !rc && j < n; j++)
		if (got[j].body)
			rc = handle_one(y, &got[j]);
	if (!got)
		rc = PT_ENOMEM;
	free(got);
	mailimap_fetch_list_free(res);
	(void)cnt;
	return rc;
}

static int select_folder(struct imap *s, const char *folder)
{
	int r;

	r = mailimap_examine(s->h, folder);
	if (r == MAILIMAP_ERROR_EXAMINE) /* the server said NO */
		return pt_error_set(PT_ENOTFOUND,
				    "imap '%s': the server "
				    "refuses to open folder '%s'; does it "
				    "exist?",
				    s->o->host, folder);
	if (r != MAILIMAP_NO_ERROR)
		return pt_error_set(PT_ENET,
				    "imap '%s': cannot open folder "
				    "'%s' (libetpan error %d)",
				    s->o->host, folder, r);
	free(s->selected);
	s->selected = pt_strdup(folder);
	return s->selected ? 0 : PT_ENOMEM;
}

static int check_validity(struct sync *y)
{
	uint32_t stored, cur;
	int rc;

	cur = y->s->h->imap_selection_info
		      ? y->s->h->imap_selection_info->sel_uidvalidity
		      : 0;
	rc = pos_load(y->db, y->s->o->account, y->folder, &stored, &y->last);
	if (rc)
		return rc;
	y->validity = cur;
	if (stored && stored != cur) {
		log_warn("imap: folder '%s' UIDVALIDITY changed (%u -> %u); "
			 "resyncing, already handled messages are skipped "
			 "by Message-ID",
			 y->folder, stored, cur);
		y->st->resyncs++;
		y->last = 0;
		return pos_save(y->db, y->s->o->account, y->folder, cur, 0);
	}
	y->since = stored ? 0 : y->s->o->first_since;
	if (!stored && !y->since)
		return pos_save(y->db, y->s->o->account, y->folder, cur,
				y->last);
	return 0;
}

/* Move the position over the run of old messages at v[*i]: never offered. */
static int pass_old(struct sync *y, const struct uid_size *v, size_t n,
		    size_t *i)
{
	while (*i < n && v[*i].old) {
		y->last = v[(*i)++].uid;
		y->st->old++;
	}
	return pos_step(y);
}

static int sync_list(struct sync *y, const struct uid_size *v, size_t n)
{
	size_t i = 0, start, bytes;
	int rc = 0;

	while (!rc && i < n) {
		if (v[i].old) {
			rc = pass_old(y, v, n, &i);
			continue;
		}
		if (v[i].size > y->s->o->max_message_size) {
			log_warn("imap: folder '%s' uid %u: %u bytes is over "
				 "imap.max-message-size (%zu); skipped",
				 y->folder, v[i].uid, v[i].size,
				 y->s->o->max_message_size);
			y->st->skipped++;
			y->last = v[i].uid;
			rc = pos_step(y);
			i++;
			continue;
		}
		start = i;
		bytes = 0;
		while (i < n && i - start < IMAP_FETCH_BATCH && !v[i].old &&
		       v[i].size <= y->s->o->max_message_size &&
		       (bytes == 0 ||
			bytes + v[i].size <= IMAP_FETCH_BATCH_BYTES))
			bytes += v[i++].size;
		rc = fetch_bodies(y, v + start, i - start);
	}
	return rc;
}

int imap_sync_folder(struct imap *s, struct db *db, const char *folder,
		     imap_msg_cb cb, void *ctx, struct imap_stats *st)
{
	struct imap_stats dummy;
	struct uid_size *v = NULL;
	struct sync y;
	size_t n = 0;
	int rc;

	memset(&dummy, 0, sizeof(dummy));
	memset(&y, 0, sizeof(y));
	y.s = s;
	y.db = db;
	y.folder = folder;
	y.cb = cb;
	y.ctx = ctx;
	y.st = st ? st : &dummy;
	rc = select_folder(s, folder);
	if (!rc)
		rc = check_validity(&y);
	if (!rc)
		rc = list_new(s, y.last, y.since, &v, &n);
	if (!rc)
		rc = sync_list(&y, v, n);
	if (!rc && y.since) /* a first sync, done: from here on incremental */
		rc = pos_save(db, s->o->account, folder, y.validity, y.last);
	free(v);
	return rc;
}
