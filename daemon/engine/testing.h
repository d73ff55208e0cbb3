/* What the engine lets tests see of its state; no layer above uses it. */
#ifndef GT_ENGINE_TESTING_H
#define GT_ENGINE_TESTING_H

#include "session.h"

struct gt_memtrack;

/* The engine's memtrack, NULL until a session needed it (tests use it to
 * check which probes are attached). */
struct gt_memtrack *gt_engine_memtrack(struct gt_engine *e);

#endif
