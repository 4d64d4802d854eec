/* The options of a gclaunch subcommand, as one table that both its parser and its --help read:
 * the parser accepts exactly the options in the table (cli_option_next), and --help prints
 * exactly them (cli_options_print), so the help cannot miss an option the parser takes, nor list
 * one it refuses. tests/cli/help_options.sh checks both directions on the built tool.
 *
 * A command keeps an enum of its options and a table indexed by it; its parser switches over the
 * enum, so the compiler (-Wswitch) names any table entry the parser does not handle. */
#ifndef GCL_CLIOPTS_H
#define GCL_CLIOPTS_H

#include <stddef.h>
#include <stdio.h>

typedef struct cli_option {
  const char *name;  /* "--grid" */
  const char *value; /* how the value is written ("X[,Y,Z]"); NULL: a flag, it takes none */
  const char *help;  /* what it does; each '\n' starts a line of its own, indented like the first */
} cli_option;

/* Walks argv from *i (the argument to look at): -1 when argv[*i] is no option (an operand, or
 * "-" alone); -2 for "-h" and "--help"; -3 after a message ("gclaunch CMD: unknown option 'X'
 * (gclaunch CMD --help)" or "option 'X' needs a value"); else the index of the option in table
 * (n entries), *value set to its value (NULL for a flag) and *i advanced past the value. */
int cli_option_next(const char *cmd, const cli_option *table, size_t n, int argc, char **argv,
                    int *i, const char **value);

/* "options:", then one line per option -- "  --name VALUE  help", the help in one column for the
 * whole table -- and "  -h, --help" last (which also names `gclaunch help CMD`). */
void cli_options_print(FILE *f, const char *cmd, const cli_option *table, size_t n);

#endif
