/*
 * policy.c - the opt-in configuration (see policy.h): reading the
 * subsystem sections, matching a patch to one, the hourly rate limit
 * counted from the outbox, and the recipients of a reply.  Nothing here
 * sends; reply.c asks before it does.
 */
#include "bot/outbox/policy.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scoring/util/fnv.h"
#include "bot/outbox/store.h"

#define POLICY_MAX_RCPTS 32

static int sub_string(struct config *cfg, const char *name, const char *key,
		      char **out)
{
	struct buf k = BUF_INIT;
	int rc;

	rc = buf_addf(&k, "subsystem.%s.%s", name, key);
	if (!rc)
		rc = config_get_string(cfg, k.ptr, NULL, out);
	buf_free(&k);
	return rc;
}

/* Every value of a multivar, each split at spaces and commas. */
static int sub_words(struct config *cfg, const char *name, const char *key,
		     int split, char ***out)
{
	struct buf k = BUF_INIT;
	char **all = NULL, **v = NULL, **nv;
	size_t n = 0, i, j, e;
	int rc;

	*out = NULL;
	rc = buf_addf(&k, "subsystem.%s.%s", name, key);
	if (!rc)
		rc = config_get_all(cfg, k.ptr, &all);
	v = pt_calloc(1, sizeof(*v));
	if (!v)
		rc = PT_ENOMEM;
	for (i = 0; !rc && all[i]; i++) {
		const char *s = all[i];

		for (j = 0; !rc && s[j];) {
			while (s[j] && split && strchr(" \t,", s[j]))
				j++;
			for (e = j; s[e] && !(split && strchr(" \t,", s[e]));
			     e++)
				;
			if (e == j)
				break;
			nv = pt_reallocarray(v, n + 2, sizeof(*v));
			if (!nv || !(nv[n] = pt_strndup(s + j, e - j))) {
				if (nv)
					v = nv;
				rc = PT_ENOMEM;
				break;
			}
			v = nv;
			v[++n] = NULL;
			j = e;
		}
	}
	config_strv_free(all);
	buf_free(&k);
	if (rc) {
		config_strv_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

static int parse_actions(const char *name, char **words, unsigned *out)
{
	size_t i;

	*out = 0;
	for (i = 0; words[i]; i++) {
		if (!strcasecmp(words[i], "check"))
			*out |= POLICY_CHECK;
		else if (!strcasecmp(words[i], "reply"))
			*out |= POLICY_REPLY;
		else if (strcasecmp(words[i], "none"))
			return pt_error_set(PT_EINVAL,
					    "subsystem '%s': "
					    "unknown action '%s'",
					    name, words[i]);
	}
	return 0;
}

static int sub_double(struct config *cfg, const char *name, const char *key,
		      double def, double *out)
{
	struct buf k = BUF_INIT;
	int rc;

	rc = buf_addf(&k, "subsystem.%s.%s", name, key);
	if (!rc)
		rc = config_get_double(cfg, k.ptr, def, out);
	buf_free(&k);
	/* written so that nan (which strtod takes) is refused too */
	if (!rc && !(*out >= 0.0 && *out <= 1.0))
		rc = pt_error_set(PT_EINVAL,
				  "subsystem '%s': %s = %g is not "
				  "a probability",
				  name, key, *out);
	return rc;
}

/* "linux-pwm.vger.kernel.org" -> "linux-pwm@vger.kernel.org" */
static char *list_address_of(const char *list_id)
{
	struct buf b = BUF_INIT;
	const char *dot = list_id ? strchr(list_id, '.') : NULL;

	if (!dot || dot == list_id)
		return NULL;
	if (buf_add(&b, list_id, (size_t)(dot - list_id)) ||
	    buf_addf(&b, "@%s", dot + 1))
		return NULL;
	return buf_detach(&b, NULL);
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	h = fnv_bytes(h, s ? s : "", s ? strlen(s) + 1 : 0);
	return fnv_byte(h, s ? 1 : 0);
}

static uint64_t hash_strv(uint64_t h, char **v)
{
	for (; v && *v; v++)
		h = hash_str(h, *v);
	return fnv_byte(h, 0xff);
}

/*
 * The section's values as read (not its text: reordering or comments
 * change nothing), so that a mute-list lasts until the maintainers'
 * configuration of the subsystem really changes.
 */
static void hash_subsys(struct policy_subsys *s)
{
	char num[96];
	uint64_t h = FNV_INIT;

	h = hash_str(h, s->name);
	h = hash_str(h, s->list_id);
	h = hash_str(h, s->list_address);
	h = hash_str(h, s->pw_project);
	h = hash_strv(h, s->maint_names);
	h = hash_strv(h, s->paths);
	h = hash_strv(h, s->recipients);
	snprintf(num, sizeof(num), "%u %.17g %.17g %ld %d %ld", s->actions,
		 s->risk_threshold, s->stable_threshold, s->rate_limit,
		 (int)s->reply_mode, s->embargo_hours);
	h = hash_str(h, num);
	snprintf(s->conf_hash, sizeof(s->conf_hash), "%016llx",
		 (unsigned long long)h);
}

static int parse_mode(const char *key, const char *v, enum policy_mode *out)
{
	if (!strcmp(v, "auto"))
		*out = POLICY_AUTO;
	else if (!strcmp(v, "approve"))
		*out = POLICY_APPROVE;
	else
		return pt_error_set(PT_EINVAL,
				    "%s = '%s': expected auto or approve", key,
				    v);
	return 0;
}

/* reply-mode and embargo-hours, each defaulting to the [reply] key. */
static int load_hold(struct policy_subsys *s, struct config *cfg,
		     const char *name)
{
	struct buf k = BUF_INIT;
	char *v = NULL, *def = NULL;
	long hours = 0;
	int rc;

	rc = config_get_string(cfg, "reply.mode", "auto", &def);
	if (!rc)
		rc = buf_addf(&k, "subsystem.%s.reply-mode", name);
	if (!rc)
		rc = config_get_string(cfg, k.ptr, NULL, &v);
	if (!rc)
		rc = parse_mode(v ? k.ptr : "reply.mode", v ? v : def,
				&s->reply_mode);
	if (rc)
		rc = pt_error_wrap(rc, "config '%s'", config_path(cfg));
	if (!rc)
		rc = config_get_int_range(cfg, "reply.embargo-hours", 0, 0,
					  24 * 30, &hours);
	buf_reset(&k);
	if (!rc)
		rc = buf_addf(&k, "subsystem.%s.embargo-hours", name);
	if (!rc)
		rc = config_get_int_range(cfg, k.ptr, hours, 0, 24 * 30,
					  &s->embargo_hours);
	free(v);
	free(def);
	buf_free(&k);
	return rc;
}

static int load_subsys(struct policy_subsys *s, struct config *cfg,
		       const char *name)
{
	struct buf k = BUF_INIT;
	char **acts = NULL;
	int rc;

	s->name = pt_strdup(name);
	rc = s->name ? 0 : PT_ENOMEM;
	if (!rc)
		rc = sub_string(cfg, name, "list-id", &s->list_id);
	if (!rc)
		rc = sub_string(cfg, name, "list", &s->list_address);
	if (!rc && !s->list_address && s->list_id)
		s->list_address = list_address_of(s->list_id);
	if (!rc)
		rc = sub_string(cfg, name, "patchwork-project", &s->pw_project);
	if (!rc)
		rc = sub_words(cfg, name, "maintainers", 0, &s->maint_names);
	if (!rc)
		rc = sub_words(cfg, name, "paths", 1, &s->paths);
	if (!rc)
		rc = sub_words(cfg, name, "actions", 1, &acts);
	if (!rc)
		rc = parse_actions(name, acts, &s->actions);
	if (!rc)
		rc = sub_double(cfg, name, "risk-threshold", 0.5,
				&s->risk_threshold);
	if (!rc)
		rc = sub_double(cfg, name, "stable-threshold", 0.8,
				&s->stable_threshold);
	if (!rc)
		rc = sub_words(cfg, name, "recipients", 1, &s->recipients);
	if (!rc && !s->recipients[0]) {
		/* the older name; sub_words replaces the empty list */
		config_strv_free(s->recipients);
		rc = sub_words(cfg, name, "reply-to", 1, &s->recipients);
	}
	if (!rc)
		rc = buf_addf(&k, "subsystem.%s.rate-limit", name);
	if (!rc)
		rc = config_get_int(cfg, k.ptr, 10, &s->rate_limit);
	if (!rc)
		rc = load_hold(s, cfg, name);
	if (!rc)
		hash_subsys(s);
	config_strv_free(acts);
	buf_free(&k);
	return rc;
}

static void subsys_clear(struct policy_subsys *s)
{
	free(s->name);
	free(s->list_id);
	free(s->list_address);
	free(s->pw_project);
	config_strv_free(s->maint_names);
	config_strv_free(s->paths);
	config_strv_free(s->recipients);
}

void policy_free(struct policy *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++)
		subsys_clear(&p->s[i]);
	free(p->s);
	maint_free(p->maint);
	free(p->from);
	free(p->contact);
	free(p->templates);
	free(p->msgid_domain);
	free(p);
}

static int load_maintainers(struct policy *p, struct config *cfg)
{
	struct buf text = BUF_INIT;
	char *path = NULL;
	int rc;

	rc = config_get_string(cfg, "policy.maintainers-file", NULL, &path);
	if (rc || !path)
		return rc;
	rc = pt_read_file(&text, path, 64u << 20);
	if (!rc)
		rc = maint_parse(&p->maint, text.ptr, text.len, NULL, NULL);
	if (rc)
		rc = pt_error_wrap(rc, "MAINTAINERS '%s'", path);
	buf_free(&text);
	free(path);
	return rc;
}

static int check_mode(struct config *cfg)
{
	enum policy_mode m;
	char *v = NULL;
	int rc;

	rc = config_get_string(cfg, "reply.mode", "auto", &v);
	if (!rc)
		rc = parse_mode("reply.mode", v, &m);
	if (rc)
		rc = pt_error_wrap(rc, "config '%s'", config_path(cfg));
	free(v);
	return rc;
}

static int load_reply_opts(struct policy *p, struct config *cfg)
{
	int rc;

	rc = config_get_string(cfg, "reply.from", NULL, &p->from);
	if (!rc)
		rc = config_get_string(cfg, "reply.contact", NULL, &p->contact);
	if (!rc)
		rc = config_get_string(cfg, "reply.templates", "templates",
				       &p->templates);
	if (!rc)
		rc = config_get_string(cfg, "reply.msgid-domain", NULL,
				       &p->msgid_domain);
	if (!rc)
		rc = config_get_bool(cfg, "policy.dry-run", 0, &p->dry_run);
	if (!rc) /* checked here too: with no subsystem it is still read */
		rc = check_mode(cfg);
	return rc;
}

int policy_load(struct policy **out, struct config *cfg)
{
	struct policy *p;
	char **names = NULL;
	size_t i, n;
	int rc;

	*out = NULL;
	p = pt_calloc(1, sizeof(*p));
	if (!p)
		return PT_ENOMEM;
	rc = config_subsystems(cfg, &names);
	for (n = 0; !rc && names[n]; n++)
		;
	if (!rc && n) {
		p->s = pt_calloc(n, sizeof(*p->s));
		rc = p->s ? 0 : PT_ENOMEM;
	}
	/* p->n counts a partly loaded section too, so that it is freed */
	for (i = 0; !rc && i < n; i++, p->n++)
		rc = load_subsys(&p->s[i], cfg, names[i]);
	if (!rc)
		rc = load_maintainers(p, cfg);
	if (!rc)
		rc = load_reply_opts(p, cfg);
	config_strv_free(names);
	if (rc) {
		policy_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

/* ---- matching ------------------------------------------------------ */

static const char *file_path(const struct patch_file *f)
{
	return f->new_path ? f->new_path : f->old_path;
}

static int covered_by_entry(const struct policy *p,
			    const struct policy_subsys *s, const char *path)
{
	struct maint_hit hits[16];
	size_t n = 0, i, j;

	if (!p->maint || !s->maint_names[0])
		return 0;
	maint_match(p->maint, path, hits, 16, &n);
	for (i = 0; i < n; i++)
		for (j = 0; s->maint_names[j]; j++)
			if (!strcasecmp(p->maint->s[hits[i].section].name,
					s->maint_names[j]))
				return 1;
	return 0;
}

static int subsys_covers(const struct policy *p, const struct policy_subsys *s,
			 const struct patch *pt, const char *pw_project)
{
	size_t i, j;

	if (s->list_id && pt->list_id && !strcasecmp(s->list_id, pt->list_id))
		return 1;
	if (s->pw_project && pw_project && !strcmp(s->pw_project, pw_project))
		return 1;
	for (i = 0; i < pt->nfiles; i++) {
		const char *path = file_path(&pt->files[i]);

		if (!path)
			continue;
		for (j = 0; s->paths[j]; j++)
			if (maint_pattern_match(path, s->paths[j]))
				return 1;
		if (covered_by_entry(p, s, path))
			return 1;
	}
	return 0;
}

int policy_match(const struct policy *p, const struct patch *pt,
		 const char *pw_project, const struct policy_subsys **out)
{
	size_t i;

	*out = NULL;
	for (i = 0; i < p->n; i++) {
		if (!p->s[i].actions)
			continue;
		if (subsys_covers(p, &p->s[i], pt, pw_project)) {
			*out = &p->s[i];
			return 0;
		}
	}
	return pt_error_set(PT_ENOTFOUND,
			    "patch '%s' is in no opted-in "
			    "subsystem",
			    pt->message_id ? pt->message_id : "?");
}

int policy_rate_ok(const struct policy_subsys *s, struct db *db,
		   const char *kind, int64_t now, int *ok)
{
	long n = 0;
	int rc;

	*ok = 1;
	if (s->rate_limit <= 0)
		return 0;
	rc = store_outbox_count_since(db, s->name, kind, now - 3600, &n);
	if (!rc)
		*ok = n < s->rate_limit;
	return rc;
}

int policy_rate_ok_dry(const struct policy_subsys *s, struct db *db,
		       const char *kind, int64_t now, int *ok)
{
	struct buf dry = BUF_INIT;
	long n = 0, m = 0;
	int rc;

	*ok = 1;
	if (s->rate_limit <= 0)
		return 0;
	rc = buf_addf(&dry, "%s%s", POLICY_DRY_PREFIX, kind);
	if (!rc)
		rc = store_outbox_count_since(db, s->name, kind, now - 3600,
					      &n);
	if (!rc)
		rc = store_outbox_count_since(db, s->name, dry.ptr, now - 3600,
					      &m);
	if (!rc)
		*ok = n + m < s->rate_limit;
	buf_free(&dry);
	return rc;
}

/* ---- recipients ---------------------------------------------------- */

struct addrs {
	char **v;
	size_t n;
};

static int addr_push(struct addrs *a, const char *addr, struct addrs *seen)
{
	char **nv;
	size_t i;

	if (!addr || !*addr || !strchr(addr, '@') ||
	    seen->n >= POLICY_MAX_RCPTS)
		return 0;
	for (i = 0; i < seen->n; i++)
		if (!strcasecmp(seen->v[i], addr))
			return 0;
	nv = pt_reallocarray(seen->v, seen->n + 1, sizeof(*nv));
	if (!nv)
		return PT_ENOMEM;
	seen->v = nv;
	seen->v[seen->n++] = (char *)addr;
	nv = pt_reallocarray(a->v, a->n + 2, sizeof(*nv));
	if (!nv)
		return PT_ENOMEM;
	a->v = nv;
	nv[a->n] = pt_strdup(addr);
	if (!nv[a->n])
		return PT_ENOMEM;
	for (i = 0; nv[a->n][i]; i++)
		nv[a->n][i] = (char)tolower((unsigned char)nv[a->n][i]);
	nv[++a->n] = NULL;
	return 0;
}

static int add_maintainers(const struct policy *p, const struct patch *pt,
			   struct addrs *cc, struct addrs *seen)
{
	struct maint_hit hits[16];
	size_t f, n, i, j;
	int rc = 0;

	if (!p->maint)
		return 0;
	for (f = 0; !rc && f < pt->nfiles; f++) {
		const char *path = file_path(&pt->files[f]);

		if (!path)
			continue;
		maint_match(p->maint, path, hits, 16, &n);
		for (i = 0; !rc && i < n; i++) {
			const struct maint_section *s =
				&p->maint->s[hits[i].section];

			if (!strcmp(s->name, "THE REST"))
				continue;
			for (j = 0; !rc && j < s->npeople; j++)
				rc = addr_push(cc, s->people[j], seen);
		}
	}
	return rc;
}

static int empty_strv(char ***v)
{
	if (*v)
		return 0;
	*v = pt_calloc(1, sizeof(**v));
	return *v ? 0 : PT_ENOMEM;
}

int policy_recipients(const struct policy *p, const struct policy_subsys *s,
		      const struct patch *pt, char ***to, char ***cc)
{
	static const char *const def[] = { "author", "list", NULL };
	const char *const *r =
		s->recipients[0] ? (const char *const *)s->recipients : def;
	struct addrs t = { NULL, 0 }, c = { NULL, 0 }, seen = { NULL, 0 };
	size_t i;
	int rc = 0;

	*to = *cc = NULL;
	for (i = 0; !rc && r[i]; i++) {
		if (!strcmp(r[i], "author"))
			rc = addr_push(&t, pt->author.email, &seen);
		else if (!strcmp(r[i], "list"))
			rc = addr_push(&c, s->list_address, &seen);
		else if (!strcmp(r[i], "maintainers"))
			rc = add_maintainers(p, pt, &c, &seen);
		else
			rc = addr_push(&c, r[i], &seen);
	}
	free(seen.v);
	if (!rc)
		rc = empty_strv(&t.v);
	if (!rc)
		rc = empty_strv(&c.v);
	if (rc) {
		config_strv_free(t.v);
		config_strv_free(c.v);
		return rc;
	}
	*to = t.v;
	*cc = c.v;
	return 0;
}

int policy_is_maintainer(const struct policy *p, const struct patch *pt,
			 const char *email)
{
	struct maint_hit hits[16];
	size_t f, n, i, j;

	if (!p->maint || !email)
		return 0;
	for (f = 0; f < pt->nfiles; f++) {
		const char *path = file_path(&pt->files[f]);

		if (!path)
			continue;
		maint_match(p->maint, path, hits, 16, &n);
		for (i = 0; i < n; i++) {
			const struct maint_section *s =
				&p->maint->s[hits[i].section];

			if (!strcmp(s->name, "THE REST"))
				continue;
			for (j = 0; j < s->npeople; j++)
				if (!strcasecmp(s->people[j], email))
					return 1;
		}
	}
	return 0;
}
