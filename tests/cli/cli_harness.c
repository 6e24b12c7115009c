/* cli_harness.c - process and file helpers for the CLI tests, see cli_harness.h. */
#include "cli_harness.h"

#include "testkit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#ifndef WARPSORT_CLI_PATH
#error "WARPSORT_CLI_PATH must name the built warpsort executable"
#endif
#ifndef WARPSORT_TEST_TMP
#error "WARPSORT_TEST_TMP must name a directory for scratch files"
#endif

#define CLI_MAX_ARGS 64

static void path_join(char *out, size_t len, const char *dir, const char *name) {
    int w = snprintf(out, len, "%s/%s", dir, name);
    assert_true(w > 0 && (size_t)w < len);
}

/* Removes a directory tree that is at most two levels deep (tests make
 * subdirectories, never deeper). */
static void remove_tree(const char *dir, int depth) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[PATH_MAX];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && depth > 0)
            remove_tree(path, depth - 1);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* The environment may point elsewhere (a binary copied to a GPU machine). */
static const char *cli_env_or(const char *name, const char *fallback) {
    const char *v = getenv(name);
    return v && v[0] ? v : fallback;
}

int cli_setup(void **state) {
    cli_t *c = calloc(1, sizeof *c);
    if (!c) return -1;
    const char *tmp = cli_env_or("WARPSORT_TEST_TMP", WARPSORT_TEST_TMP);
    mkdir(tmp, 0777); /* may exist already */
    snprintf(c->dir, sizeof c->dir, "%s/run-XXXXXX", tmp);
    if (!mkdtemp(c->dir)) {
        free(c);
        return -1;
    }
    int w = snprintf(c->capture, sizeof c->capture, "%s.capture", c->dir);
    if (w < 0 || (size_t)w >= sizeof c->capture || mkdir(c->capture, 0777) != 0) {
        rmdir(c->dir);
        free(c);
        return -1;
    }
    *state = c;
    return 0;
}

int cli_teardown(void **state) {
    cli_t *c = *state;
    remove_tree(c->dir, 2);
    remove_tree(c->capture, 0);
    free(c->out);
    free(c->err);
    free(c);
    return 0;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    fclose(f);
    buf[len] = '\0';
    return buf;
}

int cli_run(cli_t *c, ...) {
    char *argv[CLI_MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = (char *)cli_env_or("WARPSORT_CLI_PATH", WARPSORT_CLI_PATH);
    va_list ap;
    va_start(ap, c);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL;) {
        assert_true(argc <= CLI_MAX_ARGS);
        argv[argc++] = (char *)a;
    }
    va_end(ap);
    argv[argc] = NULL;

    char out_path[PATH_MAX], err_path[PATH_MAX];
    path_join(out_path, sizeof out_path, c->capture, "stdout");
    path_join(err_path, sizeof err_path, c->capture, "stderr");
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0 || chdir(c->dir) != 0)
            _exit(126);
        if (c->env_progress)
            setenv("WARPSORT_PROGRESS", c->env_progress, 1);
        else
            unsetenv("WARPSORT_PROGRESS");
        if (c->fsize_limit > 0) {
            struct rlimit rl = {(rlim_t)c->fsize_limit, (rlim_t)c->fsize_limit};
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(126);
        }
        if (c->preload) {
            setenv("LD_PRELOAD", c->preload, 1);
            /* A sanitizer build would otherwise refuse a library loaded before it. */
            setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);
        }
        if (c->run_as &&
            (setgroups(0, NULL) != 0 || setgid(c->run_as) != 0 || setuid(c->run_as) != 0))
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) assert_int_equal(errno, EINTR);
    c->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    c->term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    free(c->out);
    free(c->err);
    c->out = slurp(out_path);
    c->err = slurp(err_path);
    return c->exit_code;
}

void cli_write(cli_t *c, const char *name, const void *data, size_t bytes) {
    char path[PATH_MAX];
    path_join(path, sizeof path, c->dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (bytes) assert_int_equal(fwrite(data, 1, bytes, f), bytes);
    assert_int_equal(fclose(f), 0);
}

void *cli_read(cli_t *c, const char *name, size_t *bytes) {
    char path[PATH_MAX];
    path_join(path, sizeof path, c->dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s: %s", path, strerror(errno));
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    assert_true(len >= 0);
    rewind(f);
    void *buf = malloc(len ? (size_t)len : 1);
    assert_non_null(buf);
    if (len) assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *bytes = (size_t)len;
    return buf;
}

int cli_exists(cli_t *c, const char *name) {
    char path[PATH_MAX];
    path_join(path, sizeof path, c->dir, name);
    struct stat st;
    return lstat(path, &st) == 0;
}

void cli_mkdir(cli_t *c, const char *name) {
    char path[PATH_MAX];
    path_join(path, sizeof path, c->dir, name);
    assert_int_equal(mkdir(path, 0777), 0);
}

size_t cli_count_entries(cli_t *c, const char *fragment) {
    DIR *d = opendir(c->dir);
    assert_non_null(d);
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (!fragment || strstr(e->d_name, fragment)) count++;
    }
    closedir(d);
    return count;
}

void cli_assert_one_line(const char *text) {
    size_t len = strlen(text);
    if (len == 0 || text[len - 1] != '\n' || strchr(text, '\n') != text + len - 1)
        fail_msg("expected exactly one line, got \"%s\"", text);
}

void cli_assert_contains(const char *text, const char *fragment) {
    if (!strstr(text, fragment)) fail_msg("expected \"%s\" in \"%s\"", fragment, text);
}

void cli_assert_error(cli_t *c, ...) {
    if (c->exit_code != 2) fail_msg("expected exit 2, got %d; stderr \"%s\"", c->exit_code, c->err);
    cli_assert_one_line(c->err);
    if (strncmp(c->err, "warpsort: ", 10) != 0) fail_msg("stderr lacks the prefix: \"%s\"", c->err);
    va_list ap;
    va_start(ap, c);
    for (const char *f; (f = va_arg(ap, const char *)) != NULL;) cli_assert_contains(c->err, f);
    va_end(ap);
    assert_string_equal(c->out, ""); /* a failed command prints no result */
}

/*--- results, judged by the test oracle (testkit), not by the CLI's own check ---*/

int test_is_sorted(const void *keys, size_t n, warpsort_dtype_t dtype, int desc) {
    return wt_check_sorted(keys, n, dtype, desc ? WARPSORT_DESCENDING : 0, NULL, 0) == 0;
}

int test_same_multiset(const void *a, const void *b, size_t n, size_t elem_size) {
    return wt_check_permutation(a, b, n, elem_size, NULL, 0) == 0;
}
