/* Option tables of the gclaunch subcommands: one lookup for every parser, one printer for every
 * --help (cliopts.h says why). A leaf of the tools' file graph: it calls no other file of
 * tools/. */
#include "cliopts.h"

#include <string.h>

#define HELP_COLUMN_MAX 28 /* longer "--name VALUE" columns put their help on the next line */

int cli_option_next(const char *cmd, const cli_option *table, size_t n, int argc, char **argv,
                    int *i, const char **value) {
  const char *a = argv[*i];
  *value = NULL;
  if (!strcmp(a, "--help") || !strcmp(a, "-h")) return CLI_HELP;
  if (a[0] != '-' || a[1] == '\0') return CLI_OPERAND;
  for (size_t k = 0; k < n; k++) {
    if (strcmp(a, table[k].name)) continue;
    if (!table[k].value) return (int)k;
    if (*i + 1 >= argc) {
      fprintf(stderr, "gclaunch %s: option '%s' needs a value (%s %s)\n", cmd, a, a,
              table[k].value);
      return CLI_REFUSED;
    }
    *value = argv[++*i];
    return (int)k;
  }
  fprintf(stderr, "gclaunch %s: unknown option '%s' (gclaunch %s --help)\n", cmd, a, cmd);
  return CLI_REFUSED;
}

static size_t head_width(const cli_option *o) {
  return strlen(o->name) + (o->value ? 1 + strlen(o->value) : 0);
}

void cli_options_print(FILE *f, const char *cmd, const cli_option *table, size_t n) {
  size_t column = strlen("-h, --help");
  for (size_t k = 0; k < n; k++) {
    size_t w = head_width(&table[k]);
    if (w > column && w <= HELP_COLUMN_MAX) column = w;
  }
  fputs("\noptions:\n", f);
  for (size_t k = 0; k < n; k++) {
    const cli_option *o = &table[k];
    size_t w = head_width(o);
    fprintf(f, "  %s%s%s", o->name, o->value ? " " : "", o->value ? o->value : "");
    if (w > column) fprintf(f, "\n  %*s", (int)column, "");
    else fprintf(f, "%*s", (int)(column - w), "");
    for (const char *line = o->help; *line;) {
      size_t len = strcspn(line, "\n");
      fprintf(f, "  %.*s\n", (int)len, line);
      line += len;
      if (*line == '\n' && *++line) fprintf(f, "  %*s", (int)column, "");
    }
  }
  fprintf(f, "  %-*s  this help (exit 0), as `gclaunch help %s` prints it\n", (int)column,
          "-h, --help", cmd);
}
