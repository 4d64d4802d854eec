/* The names seen so far in one list -- a signature's parameters, a struct's members -- so that
 * the parser finds a duplicate in constant expected time instead of scanning the list (which
 * made a signature of n named parameters cost n^2 / 2 comparisons). Internal. */
#ifndef GCL_NAMESET_H
#define GCL_NAMESET_H

#include <stdbool.h>
#include <stddef.h>

typedef struct gcl__name_entry {
  const char *name; /* borrowed: the list owns its names (NULL: an empty slot) */
  size_t len, index;
} gcl__name_entry;

typedef struct gcl__nameset {
  gcl__name_entry *slots; /* open addressing, a power of two of them, at most half used */
  size_t cap, used;
} gcl__nameset;

/* True when the n characters at s were added; *index gets the index they were added with. */
bool gcl__nameset_find(const gcl__nameset *set, const char *s, size_t n, size_t *index);
/* Records name (n characters, not copied: it must live as long as the set) with index. False
 * when out of memory (the set is unchanged). */
bool gcl__nameset_add(gcl__nameset *set, const char *name, size_t n, size_t index);
void gcl__nameset_free(gcl__nameset *set);

#endif
