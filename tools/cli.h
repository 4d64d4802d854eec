/* Subcommands of the gclaunch program. Each returns the process exit status. */
#ifndef TOOLS_CLI_H
#define TOOLS_CLI_H

#include <stdio.h>

int cmd_info(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_run(int argc, char **argv);

/* Each subcommand's help text (what `gclaunch CMD --help` and `gclaunch help CMD` print). */
void demo_usage(FILE *f);
void info_usage(FILE *f);
void inspect_usage(FILE *f);
void run_usage(FILE *f);

#endif
