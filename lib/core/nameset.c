/* A hash set of names (FNV-1a, linear probing), for the signature parser's duplicate checks. */
#include "nameset.h"

#include "internal.h"

#include <stdint.h>
#include <string.h>

static size_t hash(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  h ^= h >> 33; /* FNV's low bits are weak for names that differ in their last characters */
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return (size_t)h;
}

/* The slot holding the name, or the empty slot where it would go. */
static gcl__name_entry *slot_of(const gcl__nameset *set, const char *s, size_t n) {
  size_t mask = set->cap - 1;
  for (size_t i = hash(s, n) & mask;; i = (i + 1) & mask) {
    gcl__name_entry *e = &set->slots[i];
    if (!e->name || (e->len == n && memcmp(e->name, s, n) == 0)) return e;
  }
}

bool gcl__nameset_find(const gcl__nameset *set, const char *s, size_t n, size_t *index) {
  if (!set->used) return false;
  const gcl__name_entry *e = slot_of(set, s, n);
  if (!e->name) return false;
  *index = e->index;
  return true;
}

static bool grow(gcl__nameset *set) {
  size_t cap = set->cap ? set->cap * 2 : 16;
  gcl__name_entry *slots = gcl__calloc(cap, sizeof *slots);
  if (!slots) return false;
  gcl__nameset bigger = {slots, cap, set->used};
  for (size_t i = 0; i < set->cap; i++)
    if (set->slots[i].name)
      *slot_of(&bigger, set->slots[i].name, set->slots[i].len) = set->slots[i];
  gcl__free(set->slots);
  *set = bigger;
  return true;
}

bool gcl__nameset_add(gcl__nameset *set, const char *name, size_t n, size_t index) {
  if (2 * (set->used + 1) > set->cap && !grow(set)) return false;
  gcl__name_entry *e = slot_of(set, name, n);
  if (!e->name) set->used++;
  *e = (gcl__name_entry){name, n, index};
  return true;
}

void gcl__nameset_free(gcl__nameset *set) {
  gcl__free(set->slots);
  *set = (gcl__nameset){0};
}
