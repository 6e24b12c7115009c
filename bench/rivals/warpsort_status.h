/*
 * warpsort_status.h - a warpsort status in words, with the context's detail.
 */
#ifndef WSB_RIVALS_WARPSORT_STATUS_H
#define WSB_RIVALS_WARPSORT_STATUS_H

#include <string>

#include "warpsort.h"

namespace wsb {

inline std::string warpsort_status_text(warpsort_status_t st, const warpsort_context_t *ctx) {
    std::string s = warpsort_status_name(st);
    const char *detail = ctx ? warpsort_last_error(ctx) : nullptr;
    if (detail && *detail) return s + ": " + detail;
    return s + " (" + warpsort_status_string(st) + ")";
}

} // namespace wsb

#endif /* WSB_RIVALS_WARPSORT_STATUS_H */
