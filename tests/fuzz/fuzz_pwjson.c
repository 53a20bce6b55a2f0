/*
 * fuzz_pwjson.c - libFuzzer target for the Patchwork JSON the client
 * turns into structs (bot/patchwork/patchwork.c): the input goes through
 * json_loadb as every answer does, then each element of a list (or the
 * one object) is read as an event, as a /series/ document and as a
 * check.  Strings the structs promise are never NULL, ids are positive.
 * The seeds in corpus/pwjson/ are the stand-in's answers
 * (tests/lib/pw_standin.py loaded with tests/data/pw), trimmed.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "bot/patchwork/patchwork.h"

static void as_event(const json_t *e)
{
	struct pw_event ev;

	pw_event_from_json(&ev, e);
	if (!ev.category || !ev.date || ev.json != e)
		__builtin_trap();
}

static void as_series(const json_t *s)
{
	int64_t *ids, cover;
	size_t n, i;

	if (pw_series_ids(&ids, &n, &cover, s)) {
		if (ids || n)
			__builtin_trap();
		return;
	}
	if ((n && !ids) || cover < 0)
		__builtin_trap();
	for (i = 0; i < n; i++)
		if (ids[i] <= 0)
			__builtin_trap();
	free(ids);
}

static void as_checks(const json_t *list)
{
	struct pw_check *c;
	size_t n, i;

	if (pw_checks_from_json(&c, &n, list)) {
		if (c || n)
			__builtin_trap();
		return;
	}
	if (n != json_array_size(list))
		__builtin_trap();
	for (i = 0; i < n; i++)
		if (!c[i].state || !c[i].context || !c[i].date || !c[i].user)
			__builtin_trap();
	pw_checks_free(c, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *j, *e, *one;
	size_t i;

	j = json_loadb((const char *)data, size, 0, NULL);
	if (!j)
		return 0;
	if (json_is_array(j)) {
		json_array_foreach (j, i, e) {
			as_event(e);
			as_series(e);
		}
		as_checks(j);
	} else {
		as_event(j);
		as_series(j);
		one = json_array();
		if (one && !json_array_append(one, j))
			as_checks(one);
		json_decref(one);
		as_checks(j); /* not a list: an error */
	}
	json_decref(j);
	return 0;
}
