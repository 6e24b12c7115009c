/* progress.c - stderr progress bar, see progress.h. */
#include "progress.h"

#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Short jobs finish before a bar would be readable: wait this long first. */
#define PROGRESS_DELAY_S 0.3
/* Redraw at most this often, so the bar costs nothing next to the work. */
#define PROGRESS_INTERVAL_S 0.1
#define PROGRESS_WIDTH 30

void progress_begin(progress_t *p, const char *label, uint64_t total) {
    const char *env = getenv("WARPSORT_PROGRESS");
    memset(p, 0, sizeof *p);
    p->label = label;
    p->total = total;
    p->start = cli_now();
    p->last_draw = 0.0;
    p->forced = env && strcmp(env, "1") == 0;
    p->enabled = p->forced || (isatty(STDERR_FILENO) && !(env && strcmp(env, "0") == 0));
}

static void progress_draw(progress_t *p, uint64_t done) {
    double frac = p->total ? (double)done / (double)p->total : 1.0;
    if (frac > 1.0) frac = 1.0;
    int filled = (int)(frac * PROGRESS_WIDTH);
    char bar[PROGRESS_WIDTH + 1];
    for (int i = 0; i < PROGRESS_WIDTH; i++) bar[i] = i < filled ? '#' : '.';
    bar[PROGRESS_WIDTH] = '\0';
    fprintf(stderr, "\r%-16s [%s] %3d%%", p->label, bar, (int)(frac * 100.0));
    fflush(stderr);
    p->drawn = 1;
}

void progress_update(progress_t *p, uint64_t done) {
    if (!p->enabled) return;
    double now = cli_now();
    if (!p->forced && now - p->start < PROGRESS_DELAY_S) return;
    if (done < p->total && p->drawn && now - p->last_draw < PROGRESS_INTERVAL_S) return;
    p->last_draw = now;
    progress_draw(p, done);
}

void progress_end(progress_t *p) {
    if (!p->enabled || !p->drawn) return;
    /* Erase the bar: the results printed next start on a clean line. */
    fputs("\r\033[K", stderr);
    fflush(stderr);
    p->drawn = 0;
}
