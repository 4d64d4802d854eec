/* The options of a gclaunch subcommand, as one table that both its parser and its --help read:
 * the parser accepts exactly the options in the table (cli_option_next), and --help prints
 * exactly them (cli_options_print), so the help cannot miss an option the parser takes, nor list
 * one it refuses. tests/cli/help_options.sh checks both directions on the built tool.
 *
 * A command keeps a named enum of its options (its count a macro, not an enumerator) and a table
 * indexed by it; its parser switches over a value of that enum, so that -Wswitch (in -Wall) names
 * any entry of the table the parser does not handle. */
#ifndef TOOLS_CLIOPTS_H
#define TOOLS_CLIOPTS_H

#include <stddef.h>
#include <stdio.h>

typedef struct cli_option {
  const char *name;  /* "--grid" */
  const char *value; /* how the value is written ("X[,Y,Z]"); NULL: a flag, it takes none */
  const char *help;  /* what it does; each '\n' starts a line of its own, indented like the first */
} cli_option;

/* What cli_option_next returns besides an index into the table. */
enum {
  CLI_OPERAND = -1, /* argv[*i] is no option: an operand, or "-" alone */
  CLI_HELP = -2,    /* "-h" or "--help" */
  CLI_REFUSED = -3  /* an unknown option, or one without its value: the message was printed */
};

/* Looks at argv[*i]: one of the CLI_ values above, or the index of the option in table (n
 * entries) with *value set to its value (NULL for a flag) and *i advanced past the value. The
 * messages: "gclaunch CMD: unknown option 'X' (gclaunch CMD --help)", "gclaunch CMD: option 'X'
 * needs a value (X VALUE)". */
int cli_option_next(const char *cmd, const cli_option *table, size_t n, int argc, char **argv,
                    int *i, const char **value);

/* "options:", then one line per option -- "  --name VALUE  help", the help in one column for the
 * whole table -- and "  -h, --help" last (which also names `gclaunch help CMD`). */
void cli_options_print(FILE *f, const char *cmd, const cli_option *table, size_t n);

#endif
