/*
 * model_dir.c - the model directory: manifest.json (parameters, training
 * slices, calibration, standardisation, metrics, the trees' offset),
 * text.model (liblinear) and trees.json (XGBoost), written to a
 * temporary directory and renamed into place; and reading it back.
 */
#include "scoring/model/model.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <linear.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xgboost/c_api.h>

#include "scoring/model/model_int.h"

#define TEXT_FILE "text.model"
#define TREES_FILE "trees.json"

/* The manifest's names of the kinds and the offsets. */
const char *const model_kind_names[] = { "full", "text", "tablr" };
const char *const model_offset_names[] = { "auto", "none", "size", "tabular" };

/* ---- the model directory ----------------------------------------------- */

static json_t *real_array(const double *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < n; i++)
		json_array_append_new(a, json_real(v[i]));
	return a;
}

/* The trees' offset in the manifest (absent in older ones: none). */
static json_t *offset_json(const struct offset *o)
{
	return json_pack("{s:s, s:o, s:f, s:f}", "kind",
			 model_offset_names[o->kind], "w",
			 real_array(o->w, o->w ? o->nw + 1 : 0), "mean",
			 o->mean, "sd", o->sd);
}

static json_t *manifest(const struct pt_model *m)
{
	json_t *j, *names, *used;
	size_t i;

	names = json_array();
	used = json_array();
	for (i = 0; i < m->ntab; i++) {
		json_array_append_new(names, json_string(m->tab_names[i]));
		if (m->tab_use[i])
			json_array_append_new(used,
					      json_string(m->tab_names[i]));
	}
	j = json_pack(
		"{s:i, s:s, s:s, s:s, s:s,"
		" s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I},"
		" s:{s:f, s:i, s:i, s:i, s:i, s:f, s:f, s:I, s:i, s:f, s:f},"
		" s:{s:i, s:o, s:o},"
		" s:{s:f, s:f}, s:{s:o, s:o}, s:{s:o, s:o}, s:O}",
		"format", MODEL_FORMAT, "version", m->version, "task", m->task,
		"kind", model_kind_names[m->kind], "calibration",
		m->calib == MODEL_CALIB_PLATT ? "platt" : "isotonic",
		"training", "first", (json_int_t)m->t_first, "last",
		(json_int_t)m->t_last, "rows", (json_int_t)m->nrows,
		"positives", (json_int_t)m->npos, "fit_rows",
		(json_int_t)m->nfit, "validation_rows", (json_int_t)m->nval,
		"calibration_rows", (json_int_t)m->ncal, "params", "C", m->C,
		"rounds", (int)m->rounds, "max_rounds", (int)m->max_rounds,
		"depth", (int)m->depth, "nthread", (int)m->nthread, "eta",
		m->eta, "min_child_weight", m->min_child_weight, "seed",
		(json_int_t)m->seed, "oof_folds", (int)m->oof_folds, "val_frac",
		m->val_frac, "cal_frac", m->cal_frac, "features", "hash_bits",
		(int)m->hash_bits, "tabular", names, "used", used, "platt", "a",
		m->platt_a, "b", m->platt_b, "isotonic", "x",
		real_array(m->iso_x, m->niso), "y",
		real_array(m->iso_y, m->niso), "standardise", "mean",
		real_array(m->mean, m->ntab), "sd", real_array(m->sd, m->ntab),
		"metrics", m->metrics);
	if (j && m->notes)
		json_object_set(j, "notes", m->notes);
	if (j && m->kind == MODEL_KIND_FULL &&
	    json_object_set_new(j, "offset", offset_json(&m->off))) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

static int remove_dir(const char *dir)
{
	struct buf path = BUF_INIT;
	struct dirent *e;
	DIR *dh = opendir(dir);

	if (!dh)
		return 0;
	while ((e = readdir(dh))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		buf_reset(&path);
		if (!buf_addf(&path, "%s/%s", dir, e->d_name))
			unlink(path.ptr);
	}
	closedir(dh);
	buf_free(&path);
	return rmdir(dir) ? pt_error_set(PT_EIO, "cannot remove '%s': %s", dir,
					 strerror(errno))
			  : 0;
}

static int write_parts(const struct pt_model *m, const char *tmp)
{
	struct buf path = BUF_INIT;
	json_t *j = manifest(m);
	char *text = NULL;
	const char *xbuf;
	bst_ulong xlen;
	int rc = PT_ENOMEM;

	if (!j)
		goto out;
	text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS |
				     JSON_REAL_PRECISION(17));
	if (!text || buf_addf(&path, "%s/" MODEL_MANIFEST, tmp))
		goto out;
	rc = pt_write_file_atomic(path.ptr, text, strlen(text));
	if (rc)
		goto out;
	if (m->lr) {
		buf_reset(&path);
		buf_addf(&path, "%s/" TEXT_FILE, tmp);
		if (save_model(path.ptr, m->lr)) {
			rc = pt_error_set(PT_EIO, "cannot write '%s'",
					  path.ptr);
			goto out;
		}
	}
	if (m->bst) {
		if (XGBoosterSaveModelToBuffer(m->bst, "{\"format\": \"json\"}",
					       &xlen, &xbuf)) {
			rc = xgb_error("saving");
			goto out;
		}
		buf_reset(&path);
		buf_addf(&path, "%s/" TREES_FILE, tmp);
		rc = pt_write_file_atomic(path.ptr, xbuf, xlen);
	}
out:
	json_decref(j);
	free(text);
	buf_free(&path);
	return rc;
}

int model_save(const struct pt_model *m, const char *dir)
{
	struct buf tmp = BUF_INIT, old = BUF_INIT;
	struct stat st;
	int rc;

	rc = buf_addf(&tmp, "%s.tmp.%ld", dir, (long)getpid());
	if (!rc)
		rc = buf_addf(&old, "%s.old.%ld", dir, (long)getpid());
	if (rc)
		goto out;
	remove_dir(tmp.ptr);
	if (mkdir(tmp.ptr, 0755)) {
		rc = pt_error_set(PT_EIO, "cannot create '%s': %s", tmp.ptr,
				  strerror(errno));
		goto out;
	}
	rc = write_parts(m, tmp.ptr);
	if (rc)
		goto out;
	if (!stat(dir, &st) && rename(dir, old.ptr)) {
		rc = pt_error_set(PT_EIO, "cannot move '%s' aside: %s", dir,
				  strerror(errno));
		goto out;
	}
	if (rename(tmp.ptr, dir)) {
		rc = pt_error_set(PT_EIO, "cannot rename '%s' to '%s': %s",
				  tmp.ptr, dir, strerror(errno));
		rename(old.ptr, dir);
		goto out;
	}
	remove_dir(old.ptr);
out:
	if (rc)
		remove_dir(tmp.ptr);
	buf_free(&tmp);
	buf_free(&old);
	return rc;
}

static int real_list(double **out, size_t *n, json_t *a)
{
	size_t i, len = json_array_size(a);

	*out = pt_calloc(len ? len : 1, sizeof(double));
	if (!*out)
		return PT_ENOMEM;
	for (i = 0; i < len; i++)
		(*out)[i] = json_number_value(json_array_get(a, i));
	if (n)
		*n = len;
	return 0;
}

static int parse_offset(struct pt_model *m, json_t *j, const char *path)
{
	struct offset *o = &m->off;
	const char *kind;
	json_error_t err;
	json_t *w;
	size_t k, nw;

	o->kind = MODEL_OFFSET_NONE;
	o->sd = 1;
	if (!j)
		return 0;
	if (json_unpack_ex(j, &err, 0, "{s:s, s:o, s:F, s:F}", "kind", &kind,
			   "w", &w, "mean", &o->mean, "sd", &o->sd))
		return pt_error_set(PT_EINVAL,
				    "cannot read the offset of "
				    "'%s': %s",
				    path, err.text);
	for (k = MODEL_OFFSET_NONE;
	     k <= MODEL_OFFSET_TABULAR && strcmp(kind, model_offset_names[k]);
	     k++)
		;
	if (k > MODEL_OFFSET_TABULAR)
		return pt_error_set(PT_EINVAL, "'%s': unknown offset '%s'",
				    path, kind);
	o->kind = (enum model_offset)k;
	if (o->kind == MODEL_OFFSET_NONE)
		return 0;
	nw = o->kind == MODEL_OFFSET_SIZE ? 1 : m->nused;
	if (json_array_size(w) != nw + 1 || !(o->sd > 0) ||
	    (o->kind == MODEL_OFFSET_SIZE && m->col_added == m->ntab))
		return pt_error_set(PT_EINVAL, "'%s': inconsistent offset",
				    path);
	o->nw = nw;
	return real_list(&o->w, NULL, w);
}

static int parse_manifest(struct pt_model *m, json_t *j, const char *path)
{
	json_t *names, *used, *iso_x, *iso_y, *mean, *sd, *metrics;
	const char *version, *task, *kind, *calib;
	json_int_t first, last, rows, npos, nfit, nval, ncal, seed;
	int format, rounds, maxr, depth, nthread, folds, bits;
	json_error_t err;
	size_t i, k;

	if (json_unpack_ex(
		    j, &err, 0,
		    "{s:i, s:s, s:s, s:s, s:s,"
		    " s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I},"
		    " s:{s:F, s:i, s:i, s:i, s:i, s:F, s:F, s:I, s:i, s:F,"
		    " s:F},"
		    " s:{s:i, s:o, s:o},"
		    " s:{s:F, s:F}, s:{s:o, s:o}, s:{s:o, s:o}, s:o}",
		    "format", &format, "version", &version, "task", &task,
		    "kind", &kind, "calibration", &calib, "training", "first",
		    &first, "last", &last, "rows", &rows, "positives", &npos,
		    "fit_rows", &nfit, "validation_rows", &nval,
		    "calibration_rows", &ncal, "params", "C", &m->C, "rounds",
		    &rounds, "max_rounds", &maxr, "depth", &depth, "nthread",
		    &nthread, "eta", &m->eta, "min_child_weight",
		    &m->min_child_weight, "seed", &seed, "oof_folds", &folds,
		    "val_frac", &m->val_frac, "cal_frac", &m->cal_frac,
		    "features", "hash_bits", &bits, "tabular", &names, "used",
		    &used, "platt", "a", &m->platt_a, "b", &m->platt_b,
		    "isotonic", "x", &iso_x, "y", &iso_y, "standardise", "mean",
		    &mean, "sd", &sd, "metrics", &metrics))
		return pt_error_set(PT_EINVAL, "cannot read '%s': %s", path,
				    err.text);
	if (format != MODEL_FORMAT || bits < 1 || bits > 30 ||
	    json_array_size(names) > MODEL_MAX_TAB)
		return pt_error_set(PT_EINVAL,
				    "'%s': unsupported model "
				    "(format %d)",
				    path, format);
	for (i = 0; i < 3 && strcmp(kind, model_kind_names[i]); i++)
		;
	if (i == 3)
		return pt_error_set(PT_EINVAL, "'%s': unknown kind '%s'", path,
				    kind);
	m->kind = (enum model_kind)i;
	m->calib = strcmp(calib, "platt") ? MODEL_CALIB_ISOTONIC
					  : MODEL_CALIB_PLATT;
	snprintf(m->version, sizeof(m->version), "%s", version);
	m->task = pt_strdup(task);
	m->t_first = first;
	m->t_last = last;
	m->nrows = (size_t)rows;
	m->npos = (size_t)npos;
	m->nfit = (size_t)nfit;
	m->nval = (size_t)nval;
	m->ncal = (size_t)ncal;
	m->seed = (uint64_t)seed;
	m->rounds = (unsigned)rounds;
	m->max_rounds = (unsigned)maxr;
	m->depth = (unsigned)depth;
	m->nthread = (unsigned)nthread;
	m->oof_folds = (unsigned)folds;
	m->hash_bits = (unsigned)bits;
	m->ntab = json_array_size(names);
	m->tab_names = pt_calloc(m->ntab + 1, sizeof(char *));
	m->tab_use = pt_calloc(m->ntab + 1, 1);
	m->metrics = json_deep_copy(metrics);
	if (json_is_object(json_object_get(j, "notes")) &&
	    !(m->notes = json_deep_copy(json_object_get(j, "notes"))))
		return PT_ENOMEM;
	if (!m->task || !m->tab_names || !m->tab_use || !m->metrics)
		return PT_ENOMEM;
	for (i = 0; i < m->ntab; i++) {
		const char *s = json_string_value(json_array_get(names, i));

		if (!s || !(m->tab_names[i] = pt_strdup(s)))
			return PT_ENOMEM;
		for (k = 0; k < json_array_size(used); k++)
			if (!strcmp(s,
				    json_string_value(json_array_get(used, k))
					    ?: ""))
				m->tab_use[i] = 1;
		m->nused += m->tab_use[i];
	}
	if (real_list(&m->iso_x, &m->niso, iso_x) ||
	    real_list(&m->iso_y, NULL, iso_y) ||
	    real_list(&m->mean, NULL, mean) || real_list(&m->sd, NULL, sd))
		return PT_ENOMEM;
	if (json_array_size(iso_y) != m->niso ||
	    json_array_size(mean) != m->ntab || json_array_size(sd) != m->ntab)
		return pt_error_set(PT_EINVAL, "'%s': inconsistent arrays",
				    path);
	model_size_cols(m);
	return parse_offset(m, json_object_get(j, "offset"), path);
}

static int load_parts(struct pt_model *m, const char *dir)
{
	struct buf path = BUF_INIT;
	char v[32];
	int rc = 0;

	buf_addf(&path, "%s/" TEXT_FILE, dir);
	m->lr = load_model(path.ptr);
	if (!m->lr) {
		rc = pt_error_set(PT_EIO, "cannot load '%s'", path.ptr);
		goto out;
	}
	m->lr_sign = m->lr->label[0] == 1 ? 1.0 : -1.0;
	if ((m->kind == MODEL_KIND_TABLR &&
	     m->lr->nr_feature != (int)m->nused) ||
	    (m->kind != MODEL_KIND_TABLR &&
	     m->lr->nr_feature != 1 << m->hash_bits)) {
		rc = pt_error_set(PT_EINVAL,
				  "'%s' has %d features, the "
				  "manifest says otherwise",
				  path.ptr, m->lr->nr_feature);
		goto out;
	}
	if (m->kind != MODEL_KIND_FULL)
		goto out;
	buf_reset(&path);
	buf_addf(&path, "%s/" TREES_FILE, dir);
	snprintf(v, sizeof(v), "%u", m->nthread ? m->nthread : 1);
	if (XGBoosterCreate(NULL, 0, &m->bst) ||
	    XGBoosterLoadModel(m->bst, path.ptr) ||
	    XGBoosterSetParam(m->bst, "nthread", v) ||
	    XGBoosterSetParam(m->bst, "verbosity", "0"))
		rc = xgb_error(path.ptr);
out:
	buf_free(&path);
	return rc;
}

int model_load(struct pt_model **out, const char *dir)
{
	struct buf path = BUF_INIT;
	struct pt_model *m;
	json_error_t err;
	json_t *j = NULL;
	int rc;

	*out = NULL;
	m = pt_calloc(1, sizeof(*m));
	if (!m || buf_addf(&path, "%s/" MODEL_MANIFEST, dir)) {
		free(m);
		return PT_ENOMEM;
	}
	j = json_load_file(path.ptr, 0, &err);
	if (!j) {
		rc = pt_error_set(PT_EIO, "cannot read '%s': %s", path.ptr,
				  err.text);
		goto out;
	}
	rc = parse_manifest(m, j, path.ptr);
	if (!rc)
		rc = load_parts(m, dir);
	if (!rc) {
		*out = m;
		m = NULL;
	}
out:
	json_decref(j);
	buf_free(&path);
	model_free(m);
	return rc;
}
