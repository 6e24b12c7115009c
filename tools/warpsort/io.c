/* io.c - whole-file reads and temp+rename writes, see io.h. */
#include "io.h"

#include "cli.h"
#include "progress.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Large enough to stream at disk speed, small enough for a smooth bar. */
#define IO_CHUNK ((size_t)16 << 20)

/*--- temporary files removed on fatal signals ---*/

#define IO_MAX_PENDING 4
static char *volatile io_pending[IO_MAX_PENDING];

static void io_signal_cleanup(int sig) {
    for (int i = 0; i < IO_MAX_PENDING; i++)
        if (io_pending[i]) unlink(io_pending[i]); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

static void io_install_handlers(void) {
    static int installed;
    if (installed) return;
    installed = 1;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        /* A signal the caller ignores (nohup, trap '') must stay ignored. */
        if (sigaction(sigs[i], NULL, &sa) == 0 && sa.sa_handler == SIG_IGN) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = io_signal_cleanup;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* Registry changes happen with those signals blocked, so the handler never
 * sees a half-updated slot. */
static void io_block(sigset_t *old, int block) {
    if (block) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGHUP);
        sigprocmask(SIG_BLOCK, &set, old);
    } else {
        sigprocmask(SIG_SETMASK, old, NULL);
    }
}

static int io_register(char *tmp) {
    sigset_t old;
    io_block(&old, 1);
    int slot = -1;
    for (int i = 0; i < IO_MAX_PENDING && slot < 0; i++)
        if (!io_pending[i]) slot = i;
    if (slot >= 0) io_pending[slot] = tmp;
    io_block(&old, 0);
    return slot >= 0;
}

static void io_unregister(const char *tmp) {
    sigset_t old;
    io_block(&old, 1);
    for (int i = 0; i < IO_MAX_PENDING; i++)
        if (io_pending[i] == tmp) io_pending[i] = NULL;
    io_block(&old, 0);
}

/*--- reading ---*/

int io_read_array(const char *path, size_t elem_size, const char *unit, void **data,
                  size_t *count) {
    *data = NULL;
    *count = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cli_error("%s: cannot open: %s", path, strerror(errno));
        return 0;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        cli_error("%s: cannot stat: %s", path, strerror(errno));
        close(fd);
        return 0;
    }
    if (S_ISDIR(st.st_mode) || !S_ISREG(st.st_mode)) {
        cli_error("%s: %s", path, S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
        close(fd);
        return 0;
    }
    size_t bytes = (size_t)st.st_size;
    if ((off_t)bytes != st.st_size) {
        cli_error("%s: too large for this machine (%lld bytes)", path, (long long)st.st_size);
        close(fd);
        return 0;
    }
    if (bytes % elem_size) {
        cli_error("%s: size %zu is not a multiple of %zu (%s)", path, bytes, elem_size, unit);
        close(fd);
        return 0;
    }
    /* malloc aligns to 16 bytes: enough for every dtype. */
    unsigned char *buf = malloc(bytes ? bytes : 1);
    if (!buf) {
        cli_error("%s: out of memory reading %zu bytes", path, bytes);
        close(fd);
        return 0;
    }
    progress_t bar;
    progress_begin(&bar, "reading", bytes);
    size_t done = 0;
    while (done < bytes) {
        size_t want = bytes - done < IO_CHUNK ? bytes - done : IO_CHUNK;
        ssize_t got = read(fd, buf + done, want);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            progress_end(&bar);
            if (got == 0)
                cli_error("%s: file shrank while being read", path);
            else
                cli_error("%s: read failed: %s", path, strerror(errno));
            free(buf);
            close(fd);
            return 0;
        }
        done += (size_t)got;
        progress_update(&bar, done);
    }
    progress_end(&bar);
    close(fd);
    *data = buf;
    *count = bytes / elem_size;
    return 1;
}

/*--- writing ---*/

static void io_out_free(io_out_t *out) {
    free(out->path);
    free(out->tmp);
    out->path = out->tmp = NULL;
    out->fd = -1;
}

int io_out_begin(io_out_t *out, const char *path) {
    out->path = out->tmp = NULL;
    out->fd = -1;

    /* Writing through a symlink replaces its target, not the link. */
    struct stat lst;
    char *resolved = NULL;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        resolved = realpath(path, NULL);
        if (!resolved) {
            cli_error("%s: symbolic link to a missing or unreachable target: %s", path,
                      strerror(errno));
            return 0;
        }
    }
    out->path = resolved ? resolved : strdup(path);
    if (!out->path) {
        cli_error("%s: out of memory", path);
        return 0;
    }

    struct stat st;
    mode_t mode;
    if (stat(out->path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            cli_error("%s: is a directory", path);
            io_out_free(out);
            return 0;
        }
        mode = st.st_mode & 07777; /* a replaced file keeps its permissions */
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }

    /* The temporary file lives next to the destination: rename() is atomic
     * only within one file system. */
    const char *slash = strrchr(out->path, '/');
    size_t dir_len = slash ? (size_t)(slash - out->path) + 1 : 0;
    const char *base = slash ? slash + 1 : out->path;
    static const char suffix[] = ".warpsort-tmp-XXXXXX";
    size_t tmp_len = dir_len + 1 + strlen(base) + sizeof suffix;
    out->tmp = malloc(tmp_len);
    if (!out->tmp) {
        cli_error("%s: out of memory", path);
        io_out_free(out);
        return 0;
    }
    snprintf(out->tmp, tmp_len, "%.*s.%s%s", (int)dir_len, out->path, base, suffix);

    io_install_handlers();
    sigset_t old;
    io_block(&old, 1); /* no signal between creating the file and registering it */
    out->fd = mkstemp(out->tmp);
    int err = errno;
    int registered = out->fd >= 0 && io_register(out->tmp);
    io_block(&old, 0);
    if (out->fd < 0) {
        cli_error("%s: cannot create a temporary file next to it: %s", path, strerror(err));
        free(out->tmp);
        out->tmp = NULL;
        io_out_free(out);
        return 0;
    }
    if (!registered) {
        cli_error("%s: too many outputs open at once", path);
        io_out_abort(out);
        return 0;
    }
    if (fchmod(out->fd, mode) != 0) {
        cli_error("%s: cannot set permissions: %s", path, strerror(errno));
        io_out_abort(out);
        return 0;
    }
    return 1;
}

int io_out_write(io_out_t *out, const void *data, size_t bytes, const char *label) {
    const unsigned char *p = data;
    size_t done = 0;
    progress_t bar;
    progress_begin(&bar, label, bytes);
    while (done < bytes) {
        size_t want = bytes - done < IO_CHUNK ? bytes - done : IO_CHUNK;
        ssize_t put = write(out->fd, p + done, want);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) {
            progress_end(&bar);
            cli_error("%s: write failed: %s", out->path, put < 0 ? strerror(errno) : "no progress");
            return 0;
        }
        done += (size_t)put;
        progress_update(&bar, done);
    }
    progress_end(&bar);
    return 1;
}

int io_out_finish(io_out_t *out) {
    /* Data must be on disk before the rename makes it visible: otherwise a
     * crash could leave the destination renamed but empty. */
    if (fsync(out->fd) != 0) {
        cli_error("%s: write failed: %s", out->path, strerror(errno));
        return 0;
    }
    int rc = close(out->fd);
    out->fd = -1;
    if (rc != 0) {
        cli_error("%s: write failed: %s", out->path, strerror(errno));
        return 0;
    }
    return 1;
}

int io_out_commit(io_out_t *out) {
    if (rename(out->tmp, out->path) != 0) {
        cli_error("%s: cannot replace: %s", out->path, strerror(errno));
        io_out_abort(out);
        return 0;
    }
    io_unregister(out->tmp);
    io_out_free(out);
    return 1;
}

void io_out_abort(io_out_t *out) {
    if (out->fd >= 0) close(out->fd);
    if (out->tmp) {
        unlink(out->tmp);
        io_unregister(out->tmp);
    }
    io_out_free(out);
}

int io_write_file(const char *path, const void *data, size_t bytes, const char *label) {
    io_out_t out;
    if (!io_out_begin(&out, path)) return 0;
    if (!io_out_write(&out, data, bytes, label) || !io_out_finish(&out)) {
        io_out_abort(&out);
        return 0;
    }
    return io_out_commit(&out);
}

/* Splits path into its directory ("." when none) and last component. */
static int io_split(const char *path, char *dir, size_t dir_len, const char **base) {
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    int n = slash ? snprintf(dir, dir_len, "%.*s", (int)(slash - path + 1), path)
                  : snprintf(dir, dir_len, ".");
    return n > 0 && (size_t)n < dir_len;
}

int io_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    /* A path that does not exist yet (a new output): the same file when both
     * name the same entry of the same directory ("x.bin" and "./x.bin"). */
    char da[PATH_MAX], db[PATH_MAX];
    const char *ba, *bb;
    if (!io_split(a, da, sizeof da, &ba) || !io_split(b, db, sizeof db, &bb))
        return strcmp(a, b) == 0;
    if (strcmp(ba, bb) != 0) return 0;
    if (stat(da, &sa) != 0 || stat(db, &sb) != 0) return strcmp(a, b) == 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}
