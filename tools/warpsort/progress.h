/*
 * progress.h - a one-line progress bar on stderr for long work.
 *
 * Drawn only when stderr is a terminal and the work has run for a moment,
 * so pipes, logs and tests never see it. WARPSORT_PROGRESS=0 turns it off,
 * WARPSORT_PROGRESS=1 forces it on (drawn from the start, also into a pipe).
 */
#ifndef WARPSORT_CLI_PROGRESS_H
#define WARPSORT_CLI_PROGRESS_H

#include <stdint.h>

typedef struct progress {
    const char *label;
    uint64_t total;
    double start;
    double last_draw;
    int enabled;
    int forced;
    int drawn; /* something is on the line and must be cleared */
} progress_t;

void progress_begin(progress_t *p, const char *label, uint64_t total);
void progress_update(progress_t *p, uint64_t done);
/* Clears the bar; the terminal line is left as it was before. */
void progress_end(progress_t *p);

#endif /* WARPSORT_CLI_PROGRESS_H */
