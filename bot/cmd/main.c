/*
 * main.c - the patchtriage executable's entry point; everything else is
 * in cli.c and the cmd_*.c files.
 */
#include "bot/cmd/cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
