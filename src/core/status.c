/* status.c - status names and strings from the one X-macro list. */
#include "internal.h"

#include <stdio.h>

const char *warpsort_status_name(warpsort_status_t status) {
    switch (status) {
#define WS_X_NAME_(name, value, text) \
    case WARPSORT_##name: return "WARPSORT_" #name;
        WARPSORT_STATUS_LIST(WS_X_NAME_)
#undef WS_X_NAME_
    default: return "WARPSORT_UNKNOWN_STATUS";
    }
}

const char *warpsort_status_string(warpsort_status_t status) {
    switch (status) {
#define WS_X_TEXT_(name, value, text) \
    case WARPSORT_##name: return text;
        WARPSORT_STATUS_LIST(WS_X_TEXT_)
#undef WS_X_TEXT_
    default: return "unknown status code";
    }
}

warpsort_status_t ws_error(warpsort_context_t *ctx, warpsort_status_t status, const char *fmt,
                           ...) {
    if (ctx) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->last_error, sizeof ctx->last_error, fmt, ap);
        va_end(ap);
    }
    return status;
}

const char *warpsort_last_error(const warpsort_context_t *ctx) {
    if (!ctx) return "no context (NULL handle)";
    return ctx->last_error;
}

#define WS_STR2_(x) #x
#define WS_STR_(x) WS_STR2_(x)
const char *warpsort_version(void) {
    return WS_STR_(WARPSORT_VERSION_MAJOR) "." WS_STR_(WARPSORT_VERSION_MINOR) "." WS_STR_(
        WARPSORT_VERSION_PATCH);
}
int warpsort_version_code(void) { return WARPSORT_VERSION_CODE; }
