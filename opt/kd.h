/* kd.h - the bottom-up greedy's priority structure (kd.c). */
#ifndef MP_KD_H
#define MP_KD_H

#include <stdbool.h>
#include <stdint.h>

typedef struct kd kd;

/* Items 0..n-1 with lifetimes [s, e] and tie-break ranks; keys start 0. */
kd *mp_kd_new(const int32_t *s, const int32_t *e, const uint32_t *rank, uint32_t n);
void mp_kd_free(kd *k);
/* The alive item with the smallest (key, rank); false when none is left. */
bool mp_kd_min(kd *k, uint32_t *item, uint64_t *key);
/* Remove an item; returns the item that last raised its key, or UINT32_MAX. */
uint32_t mp_kd_remove(kd *k, uint32_t item);
/* key = max(key, v) for every alive item overlapping [s, e]. */
void mp_kd_raise(kd *k, int32_t s, int32_t e, uint64_t v, uint32_t who);
uint64_t mp_kd_work(const kd *k);

#endif
