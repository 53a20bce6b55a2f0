/*
 * cmds.h - declares cmd_<name>() for every row of cmds.inc.  A command is
 * added by writing bot/cmd_<name>.c and one PT_COMMAND line in cmds.inc.
 */
#ifndef PT_CMDS_H
#define PT_CMDS_H

struct cli_ctx;

#define PT_COMMAND(name, usage, summary) \
	int cmd_##name(int argc, char **argv, struct cli_ctx *ctx);
#include "bot/cmd/cmds.inc"
#undef PT_COMMAND

/* The --archive forms of train and eval (cmd_archeval.c). */
int cmd_archive_given(int argc, char **argv);
int cmd_eval_archive(int argc, char **argv, struct cli_ctx *ctx);
int cmd_train_archive(int argc, char **argv, struct cli_ctx *ctx);

#endif
