/* gclaunch: the command-line front end. `gclaunch CMD --help` and `gclaunch help CMD` print the
 * command's help and exit 0 for every command. */
#include "cli.h"

#include <gclaunch/gclaunch.h>
#include <stdio.h>
#include <string.h>

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  void (*usage)(FILE *f);
  const char *help;
} command;

static const command commands[] = {
    {"demo", cmd_demo, demo_usage, "copy tensors via one megakernel's struct of maps; layout if no GPU"},
    {"help", NULL, NULL, "help [COMMAND]: this list, or a command's options"},
    {"info", cmd_info, info_usage, "driver, devices and NVRTC: found or not, and why (--json)"},
    {"inspect", cmd_inspect, inspect_usage,
     "kernels and parameter layout of a cubin, fatbin, PTX, host ELF or .cu file"},
    {"run", cmd_run, run_usage,
     "launch one kernel: buffers, scalars, tensor maps; checksums and time"},
};
#define COMMAND_COUNT (sizeof commands / sizeof *commands)

static void usage(FILE *f) {
  fprintf(f, "gclaunch %s -- launch CUDA kernels with device-exact parameter buffers\n\n",
          gcl_version());
  fprintf(f, "usage: gclaunch COMMAND [ARGS]   (gclaunch help COMMAND, gclaunch COMMAND --help)\n"
             "       gclaunch --version\n\n"
             "commands:\n");
  for (size_t i = 0; i < COMMAND_COUNT; i++)
    fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
}

static const command *find(const char *name) {
  for (size_t i = 0; i < COMMAND_COUNT; i++)
    if (!strcmp(name, commands[i].name)) return &commands[i];
  return NULL;
}

static bool wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return true;
  return false;
}

static int help(int argc, char **argv) {
  if (argc < 2 || wants_help(argc, argv)) return usage(stdout), 0; /* also `help --help` */
  const command *c = find(argv[1]);
  if (c && c->usage) return c->usage(stdout), 0;
  if (c) return usage(stdout), 0;
  fprintf(stderr, "gclaunch help: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("gclaunch %s\n", gcl_version());
    return 0;
  }
  if (!strcmp(argv[1], "help")) return help(argc - 1, argv + 1);
  const command *c = find(argv[1]);
  if (c && c->usage && wants_help(argc - 1, argv + 1)) return c->usage(stdout), 0;
  if (c) return c->run(argc - 1, argv + 1);
  fprintf(stderr, "gclaunch: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
