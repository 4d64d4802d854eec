/* Subcommands of the gclaunch program. Each returns the process exit status. */
#ifndef GCL_CLI_H
#define GCL_CLI_H

int gcl_cmd_info(int argc, char **argv);
int gcl_cmd_demo(int argc, char **argv);
int gcl_cmd_inspect(int argc, char **argv);
int gcl_cmd_run(int argc, char **argv);

#endif
