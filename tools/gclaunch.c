/* gclaunch: the command-line front end. */
#include "cli.h"

#include <gclaunch/gclaunch.h>
#include <stdio.h>
#include <string.h>

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *help;
} command;

static const command commands[] = {
    {"demo", gcl_cmd_demo, "copy tensors via one tensormap[N] megakernel; layout if no GPU"},
    {"info", gcl_cmd_info, "driver, devices and NVRTC: found or not, and why"},
    {"inspect", gcl_cmd_inspect, "kernels and parameter layout of a cubin, fatbin or PTX file"},
    {"run", gcl_cmd_run, "launch one kernel: buffers, scalars, tensor maps; checksums and time"},
};

static void usage(FILE *f) {
  fprintf(f, "gclaunch %s -- launch CUDA kernels with device-exact parameter buffers\n\n",
          gcl_version());
  fprintf(f, "usage: gclaunch COMMAND [ARGS]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
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
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "gclaunch: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
