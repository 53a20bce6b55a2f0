/*
 * fuzz_config.c - libFuzzer target for the configuration: the input is a
 * git-config file read by scoring/store/config.c (through libgit2), asked for
 * the keys the commands read with every getter, listed for subsystem
 * sections, then loaded by bot/outbox/policy.c's policy_load and matched
 * against a fixed patch.  The file is one memfd per process, rewritten
 * for each input.  Inputs with an [include] or [includeIf] section
 * (which read other files) are skipped, and so is policy_load on one
 * that sets policy.maintainers-file (read from disk: fuzz_maintainers
 * covers the parse); no secret is read (password-command runs a shell).
 */
#include <git2.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scoring/store/config.h"
#include "scoring/patch/patch.h"
#include "bot/outbox/policy.h"

static char path[64];
static int fd = -1;

static const char *const keys[] = {
	"patchwork.url",
	"patchwork.project",
	"patchwork.timeout",
	"patchwork.ssl-verify",
	"patchwork.per-page",
	"imap.url",
	"imap.folder",
	"imap.max-message-size",
	"smtp.url",
	"reply.from",
	"policy.dry-run",
	"mail.sentiment-file",
	"subsystem.netdev.paths",
	"subsystem.netdev.risk-threshold",
	"core.x",
	"a.b.c.d",
	"x",
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* keep libgit2 initialised: config_free() must not shut it down */
	git_libgit2_init();
	fd = memfd_create("pt-fuzz-config", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return 0;
}

static void getters(const struct config *cfg)
{
	char *s, **v;
	long l;
	double d;
	int b;
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
		if (!config_get_string(cfg, keys[i], "def", &s) && !s)
			__builtin_trap();
		free(s);
		(void)config_get_int(cfg, keys[i], 7, &l);
		(void)config_get_double(cfg, keys[i], 0.5, &d);
		(void)config_get_bool(cfg, keys[i], 1, &b);
		if (!config_get_all(cfg, keys[i], &v) && !v)
			__builtin_trap();
		config_strv_free(v);
	}
}

static void policy(struct config *cfg)
{
	static char f0[] = "drivers/net/ethernet/foo.c", f1[] = "README";
	static char email[] = "jane@example.org",
		    lid[] = "netdev.vger.kernel.org";
	struct patch_file files[2];
	struct patch pt;
	const struct policy_subsys *s;
	struct policy *p;
	char **to, **cc;
	size_t i;

	if (policy_load(&p, cfg))
		return;
	for (i = 0; i < p->n; i++)
		if (!(p->s[i].risk_threshold >= 0 &&
		      p->s[i].risk_threshold <= 1) ||
		    !(p->s[i].stable_threshold >= 0 &&
		      p->s[i].stable_threshold <= 1))
			__builtin_trap();
	memset(files, 0, sizeof(files));
	memset(&pt, 0, sizeof(pt));
	files[0].new_path = f0;
	files[1].old_path = f1;
	pt.files = files;
	pt.nfiles = 2;
	pt.author.email = email;
	pt.list_id = lid;
	if (!policy_match(p, &pt, "netdevbpf", &s) &&
	    !policy_recipients(p, s, &pt, &to, &cc)) {
		config_strv_free(to);
		config_strv_free(cc);
	}
	policy_free(p);
}

/*
 * Does a section header start with "include" ([include], [includeIf
 * "..."], any case)?  Those read other files.
 */
static int includes(const uint8_t *data, size_t size)
{
	static const char word[] = "include";
	size_t i, j, k;

	for (i = 0; i < size; i++) {
		if (data[i] != '[')
			continue;
		for (k = i + 1; k < size && (data[k] == ' ' || data[k] == '\t');
		     k++)
			;
		for (j = 0; j < 7 && k + j < size; j++)
			if ((data[k + j] | 0x20) != word[j])
				break;
		if (j == 7)
			return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config *cfg;
	char **names, *mf = NULL;
	size_t i;

	if (includes(data, size))
		return 0;
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	if (config_open(&cfg, path)) {
		if (cfg)
			__builtin_trap();
		return 0;
	}
	getters(cfg);
	if (!config_subsystems(cfg, &names)) {
		for (i = 0; names[i]; i++)
			if (!*names[i])
				__builtin_trap();
		config_strv_free(names);
	}
	/* policy_load would read that file from disk */
	if (config_get_string(cfg, "policy.maintainers-file", NULL, &mf) || !mf)
		policy(cfg);
	free(mf);
	(void)config_warnings(cfg);
	config_free(cfg);
	return 0;
}
