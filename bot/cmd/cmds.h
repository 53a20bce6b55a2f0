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

#endif
