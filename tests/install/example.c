/* example.c - the README's example, built against an installed warpsort by
 * the install test (through find_package and through pkg-config). */
#include <stdio.h>
#include <warpsort.h>

int main(void) {
    float keys[] = {3.5f, -0.0f, 1e9f, -2.0f, 0.0f, -1e-9f, 7.0f, -2.0f};
    unsigned ids[] = {0, 1, 2, 3, 4, 5, 6, 7};
    size_t n = sizeof keys / sizeof keys[0];

    warpsort_context_t *ctx;
    warpsort_config_t cfg = WARPSORT_CONFIG_INIT; /* always start here: it sets cfg.struct_size */
    cfg.backend = WARPSORT_BACKEND_AUTO;          /* the GPU if usable, else the CPU */
    if (warpsort_create(&ctx, &cfg) != WARPSORT_OK) return 1;
    warpsort_status_t st = warpsort_sort_pairs(ctx, keys, ids, n, WARPSORT_F32, sizeof ids[0],
                                               WARPSORT_ASCENDING | WARPSORT_STABLE);
    if (st != WARPSORT_OK) {
        fprintf(stderr, "%s: %s\n", warpsort_status_name(st), warpsort_last_error(ctx));
        warpsort_destroy(ctx);
        return 1;
    }
    printf("warpsort %s on %s:", warpsort_version(),
           warpsort_backend_name(warpsort_get_backend(ctx)));
    for (size_t i = 0; i < n; i++) printf(" %g(#%u)", keys[i], ids[i]);
    printf("\n");
    warpsort_destroy(ctx);
    return 0;
}
