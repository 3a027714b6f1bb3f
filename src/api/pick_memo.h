/* pick_memo.h -- the handle's memo of immediate mode's picks. A ranking
 * (database, model, policy) costs ~4 us; on a layer that runs in 5 us (a
 * squeeze-excitation 1x1 on a 1x1 map) that is most of a call, and AUTO
 * ranks on every call. The ranking depends only on the problem, the
 * thread count and the weights mode, and on the database and model, which
 * are read once per process (heur/db_snapshot.h, heur/model_cache.h): a
 * pick stays right for the life of the handle. Per handle, so no lock
 * (a handle is used by one thread at a time); direct-mapped, a collision
 * just ranks again. */
#ifndef CONVSEL_API_PICK_MEMO_H
#define CONVSEL_API_PICK_MEMO_H

#include <stdbool.h>

#include "core/problem.h"

#define PICK_MEMO_SLOTS 64

struct pick_memo_slot {
    struct conv_problem p;
    int threads;
    bool weights_constant;
    int solver; /* -1: empty */
};

struct pick_memo {
    struct pick_memo_slot slot[PICK_MEMO_SLOTS];
    long hits, misses; /* for tests */
};

void pick_memo_init(struct pick_memo *m);

/* The remembered pick for p run this way, or -1. */
int pick_memo_find(struct pick_memo *m, const struct conv_problem *p, int threads,
                   bool weights_constant);

void pick_memo_put(struct pick_memo *m, const struct conv_problem *p, int threads,
                   bool weights_constant, int solver);

#endif
