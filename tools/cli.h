/* Subcommands of the gclaunch program. Each returns the process exit status. */
#ifndef GCL_CLI_H
#define GCL_CLI_H

#include <stdio.h>

int gcl_cmd_info(int argc, char **argv);
int gcl_cmd_demo(int argc, char **argv);
int gcl_cmd_inspect(int argc, char **argv);
int gcl_cmd_run(int argc, char **argv);

/* Each subcommand's help text (what `gclaunch CMD --help` and `gclaunch help CMD` print). */
void gcl_demo_usage(FILE *f);
void gcl_info_usage(FILE *f);
void gcl_inspect_usage(FILE *f);
void gcl_run_usage(FILE *f);

#endif
