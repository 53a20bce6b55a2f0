/*
 * fuzz_template.c - libFuzzer target for scoring/util/template.c: the input is
 * a template rendered with the variables bot/mail/reply.c sets (a list of
 * three reasons among them), and what renders is then wrapped at 72
 * columns as a reply is.  A render must stay under TPL_MAX_OUTPUT and a
 * failed one must leave a message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scoring/util/template.h"

static int vars(struct tpl_vars **out)
{
	static const char *const plain[][2] = {
		{ "author_first", "Jane" },
		{ "subsystem", "netdev" },
		{ "subject",
		  "net: fix a \xc3\xa9l\xc3\xa9ment leak in probe()" },
		{ "risk_percent", "42" },
		{ "stable_percent", "87" },
		{ "threshold_percent", "30" },
		{ "model_version", "m-20261101-abcdef" },
		{ "tool_version", "0.1.0" },
		{ "review", "" },
		{ "contact", "bot-admin@example.org" },
		{ "has_fixes", "1" },
		{ "suggested_fixes",
		  "Fixes: 0123456789ab (\"net: add probe\")" },
	};
	static const char *const reasons[][2] = {
		{ "large diff touching 12 files", "up" },
		{ "no Reviewed-by", "up" },
		{ "", "" },
	};
	struct tpl_vars *v, *it;
	size_t i;
	int rc;

	rc = tpl_vars_new(&v);
	for (i = 0; !rc && i < sizeof(plain) / sizeof(*plain); i++)
		rc = tpl_set(v, plain[i][0], plain[i][1]);
	for (i = 0; !rc && i < sizeof(reasons) / sizeof(*reasons); i++) {
		rc = tpl_list_add(v, "reasons", &it);
		if (!rc)
			rc = tpl_set(it, "text", reasons[i][0]);
		if (!rc)
			rc = tpl_set(it, "direction", reasons[i][1]);
	}
	if (rc) {
		tpl_vars_free(v);
		v = NULL;
	}
	*out = v;
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf out = BUF_INIT, wrapped = BUF_INIT;
	struct tpl_vars *v;
	int rc;

	if (vars(&v))
		return 0;
	pt_error_clear();
	rc = tpl_render(&out, (const char *)data, size, v, "fuzz");
	if (out.len > TPL_MAX_OUTPUT)
		__builtin_trap();
	if (rc && rc != PT_ENOMEM && !*pt_error_last())
		__builtin_trap();
	if (!rc && tpl_wrap(&wrapped, out.ptr, out.len, 72))
		__builtin_trap();
	buf_free(&wrapped);
	buf_free(&out);
	tpl_vars_free(v);
	return 0;
}
