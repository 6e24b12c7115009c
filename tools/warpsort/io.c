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
    /* O_NONBLOCK: opening a FIFO must not wait for a writer before it is refused. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
        cli_error("%s: cannot read: %s", path, strerror(errno));
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

static const char io_not_regular[] =
    "not a regular file (outputs must be regular files, replaced whole)";

/* rename() needs only the directory writable, so the file's own permission
 * is checked here, as cp checks its destination. Root passes every access
 * check, so a file with no write bit at all is refused for everyone: its
 * owner marked it read-only. */
static int io_check_writable(const char *shown, const char *path, const struct stat *st) {
    if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0) {
        cli_error("%s: cannot replace: %s", shown, strerror(errno));
        return 0;
    }
    if ((st->st_mode & 0222) == 0) {
        cli_error("%s: cannot replace: %s (read-only file)", shown, strerror(EACCES));
        return 0;
    }
    return 1;
}

/* Resolves a symlinked destination and checks it: *resolved_out gets the
 * file to replace (free it), *st its status, *exists 0 when it is new. */
static int io_out_resolve(const char *path, char **resolved_out, struct stat *st, int *exists) {
    *resolved_out = NULL;
    /* Writing through a symlink replaces its target, not the link. */
    struct stat lst;
    char *resolved = NULL;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        resolved = realpath(path, NULL);
        if (!resolved) {
            int err = errno;
            /* /dev/stdout on a pipe: a link to something with no path. */
            struct stat target;
            if (stat(path, &target) == 0 && !S_ISREG(target.st_mode))
                cli_error("%s: %s", path, io_not_regular);
            else
                cli_error("%s: symbolic link to a missing or unreachable target: %s", path,
                          strerror(err));
            return 0;
        }
    }
    char *target = resolved ? resolved : strdup(path);
    if (!target) {
        cli_error("%s: out of memory", path);
        return 0;
    }
    *exists = stat(target, st) == 0;
    if (*exists) {
        /* FIFOs, devices and sockets are refused rather than replaced by a
         * regular file: a stream cannot be written all-or-nothing. */
        const char *bad = S_ISDIR(st->st_mode)    ? "is a directory"
                          : !S_ISREG(st->st_mode) ? io_not_regular
                                                  : NULL;
        if (bad) {
            cli_error("%s: %s", path, bad);
            free(target);
            return 0;
        }
        if (!io_check_writable(path, target, st)) {
            free(target);
            return 0;
        }
    }
    *resolved_out = target;
    return 1;
}

int io_out_check(const char *path) {
    char *target;
    struct stat st;
    int exists;
    if (!io_out_resolve(path, &target, &st, &exists)) return 0;
    free(target);
    return 1;
}

/* Builds "<dir>/.<base>.warpsort-tmp-XXXXXX" for mkstemp, shortening base so
 * the name fits the directory's name limit (a 255-byte base must work). */
static char *io_temp_name(const char *path) {
    static const char suffix[] = ".warpsort-tmp-XXXXXX";
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = slash ? slash + 1 : path;

    char *dir = malloc(dir_len + 2);
    if (!dir) return NULL;
    if (dir_len)
        snprintf(dir, dir_len + 1, "%.*s", (int)dir_len, path);
    else
        strcpy(dir, ".");
    long name_max = pathconf(dir, _PC_NAME_MAX);
    free(dir);
    if (name_max <= 0 || name_max > NAME_MAX) name_max = NAME_MAX;

    size_t overhead = 1 + (sizeof suffix - 1); /* the leading dot and the suffix */
    size_t keep = strlen(base);
    if (keep + overhead > (size_t)name_max) {
        keep = (size_t)name_max > overhead ? (size_t)name_max - overhead : 0;
        /* Cut before a UTF-8 continuation byte, not inside a character. */
        while (keep > 0 && ((unsigned char)base[keep] & 0xC0) == 0x80) keep--;
    }
    size_t len = dir_len + 1 + keep + sizeof suffix;
    char *tmp = malloc(len);
    if (tmp) snprintf(tmp, len, "%.*s.%.*s%s", (int)dir_len, path, (int)keep, base, suffix);
    return tmp;
}

/* Gives the temporary file the replaced file's owner and group where the
 * process may, then its mode; set-id bits survive only with both kept. */
static int io_copy_owner_and_mode(io_out_t *out, const struct stat *old, const char *shown) {
    struct stat now;
    if (fstat(out->fd, &now) != 0) {
        cli_error("%s: cannot stat the temporary file: %s", shown, strerror(errno));
        return 0;
    }
    int same = now.st_uid == old->st_uid && now.st_gid == old->st_gid;
    if (!same) same = fchown(out->fd, old->st_uid, old->st_gid) == 0;
    /* Not permitted (not root): at least the group, where we belong to it. */
    if (!same && fchown(out->fd, (uid_t)-1, old->st_gid) == 0) same = now.st_uid == old->st_uid;
    mode_t mode = old->st_mode & 07777;
    if (!same) mode &= ~(mode_t)06000;
    if (fchmod(out->fd, mode) != 0) {
        cli_error("%s: cannot set permissions: %s", shown, strerror(errno));
        return 0;
    }
    return 1;
}

int io_out_begin(io_out_t *out, const char *path) {
    out->path = out->tmp = NULL;
    out->fd = -1;

    struct stat st;
    int exists;
    if (!io_out_resolve(path, &out->path, &st, &exists)) return 0;

    /* The temporary file lives next to the destination: rename() is atomic
     * only within one file system. */
    out->tmp = io_temp_name(out->path);
    if (!out->tmp) {
        cli_error("%s: out of memory", path);
        io_out_free(out);
        return 0;
    }

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
    int ok;
    if (exists) {
        ok = io_copy_owner_and_mode(out, &st, path); /* a replaced file keeps both */
    } else {
        mode_t mask = umask(0);
        umask(mask);
        ok = fchmod(out->fd, 0666 & ~mask) == 0;
        if (!ok) cli_error("%s: cannot set permissions: %s", path, strerror(errno));
    }
    if (!ok) {
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

int io_out_commit_pair(io_out_t *first, io_out_t *second) {
    /* The handled signals wait until both renames are done: an interrupt
     * between them would leave the first file new and the second old. */
    sigset_t old;
    io_block(&old, 1);
    int ok = 0;
    if (rename(first->tmp, first->path) != 0) {
        cli_error("%s: cannot replace: %s", first->path, strerror(errno));
        io_out_abort(first);
        if (second) io_out_abort(second);
    } else {
        io_unregister(first->tmp);
        if (second && rename(second->tmp, second->path) != 0) {
            cli_error("%s was written but %s could not be replaced (%s): they no longer match",
                      first->path, second->path, strerror(errno));
            io_out_abort(second);
        } else {
            if (second) io_unregister(second->tmp);
            ok = 1;
        }
        io_out_free(first);
        if (second && ok) io_out_free(second);
    }
    io_block(&old, 0);
    return ok;
}

int io_out_commit(io_out_t *out) { return io_out_commit_pair(out, NULL); }

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
