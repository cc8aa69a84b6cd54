/*
 * deepseek-agent's addition to PyInstaller's bootloader: a one-file exe whose runtime is unpacked
 * once per user and build, not at every start.
 *
 * A stock one-file exe inflates libpython, the standard library it starts with and its data files
 * into a fresh temporary folder at every start, runs the program in a second process and deletes
 * the folder at exit: most of what `--version` costs. With the run-time option
 * `pyi-persistent-runtime <id>` (the build's hash of what it unpacks), the exe unpacks them once to
 * <user cache>/deepseek-agent/runtime/<id> and from then on starts from there as a one-folder
 * build does: one process, nothing written, nothing deleted.
 *
 * The folder is private (0700, owned by the user, not a link) and appears by one rename of a
 * finished temporary folder, so a start sees it whole or not at all. A start checks each file's
 * size against the archive (a cache cleaner may have deleted or truncated some) and unpacks a new
 * copy when one is wrong. Where none of this can be done (no cache folder, a full disk) or should
 * not be (elevated privileges: a setuid exe, whose environment another user set, or a UAC-elevated
 * one, which must not load a library that unelevated programs of the user could have replaced; a
 * cache folder that someone else could change, as a user's HOME is to root) the exe runs as a
 * stock one-file exe. Wine reports every program as UAC-elevated; there is no
 * such boundary under wine, so there it is not one.
 *
 * Distributed, like the bootloader it is built into, under the GNU General Public License (version
 * 2 or later) with the bootloader exception.
 */

#ifdef _WIN32
    #include <windows.h>
#else
    #include <errno.h>
    #include <sys/stat.h>
    #include <sys/types.h>
    #include <time.h>
    #include <unistd.h>
#endif
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyi_archive.h"
#include "pyi_global.h"
#include "pyi_launch.h"
#include "pyi_main.h"
#include "pyi_path.h"
#include "pyi_persistent.h"
#include "pyi_utils.h"

#define OPTION_NAME "pyi-persistent-runtime "
#define CHECKED_VARIABLE "DEEPSEEK_AGENT_RUNTIME_CHECKED"

/* The option's value when it is a hex id of 8 to 64 digits (it becomes a folder name). */
static const char *
_option_id(const struct ARCHIVE *archive)
{
    const struct TOC_ENTRY *entry;
    const size_t prefix = sizeof(OPTION_NAME) - 1;

    for (entry = archive->toc; entry < archive->toc_end; entry = pyi_archive_next_toc_entry(archive, entry)) {
        if (entry->typecode == ARCHIVE_ITEM_RUNTIME_OPTION && strncmp(entry->name, OPTION_NAME, prefix) == 0) {
            const char *id = entry->name + prefix;
            size_t length = strspn(id, "0123456789abcdef");
            return (length >= 8 && length <= 64 && id[length] == '\0') ? id : NULL;
        }
    }
    return NULL;
}

/* Entries a one-file exe unpacks; a multi-package reference is not supported here. */
static bool
_unpacks(const struct TOC_ENTRY *entry)
{
    return entry->typecode == ARCHIVE_ITEM_BINARY || entry->typecode == ARCHIVE_ITEM_DATA ||
           entry->typecode == ARCHIVE_ITEM_ZIPFILE || entry->typecode == ARCHIVE_ITEM_SYMLINK;
}

/* <user cache>/deepseek-agent/runtime: %LOCALAPPDATA% on Windows, $XDG_CACHE_HOME or ~/.cache
 * elsewhere, as core/frozen_imports.py finds its cache. */
static int
_runtime_root(char *root)
{
    int written = -1;
#ifdef _WIN32
    char *base = pyi_getenv("LOCALAPPDATA");
    if (base && strlen(base) > 2 && base[1] == ':') {
        written = snprintf(root, PYI_PATH_MAX, "%s\\deepseek-agent\\runtime", base);
    }
    free(base);
#else
    char *xdg = pyi_getenv("XDG_CACHE_HOME");
    char *home = pyi_getenv("HOME");
    if (xdg && xdg[0] == '/') {
        written = snprintf(root, PYI_PATH_MAX, "%s/deepseek-agent/runtime", xdg);
    } else if (home && home[0] == '/') {
        written = snprintf(root, PYI_PATH_MAX, "%s/.cache/deepseek-agent/runtime", home);
    }
    free(xdg);
    free(home);
#endif
    return (written > 0 && written < PYI_PATH_MAX - 128) ? 0 : -1;
}

/* A folder that only this user can change: not a link, owned by us, writable by nobody else. */
static bool
_is_private_folder(const char *path)
{
#ifdef _WIN32
    wchar_t path_w[PYI_PATH_MAX];
    DWORD attributes;
    if (pyi_win32_utf8_to_wcs(path, path_w, PYI_PATH_MAX) == NULL) {
        return false;
    }
    attributes = GetFileAttributesW(path_w);
    return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) &&
           !(attributes & FILE_ATTRIBUTE_REPARSE_POINT);
#else
    struct stat info;
    return lstat(path, &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == geteuid() &&
           (info.st_mode & (S_IWGRP | S_IWOTH)) == 0;
#endif
}

/* POSIX: whether no one but this user (or root) can change what `path` names: each folder on the
 * way to it that exists is owned by one of them and writable by nobody else, or sticky as /tmp is
 * (where only an entry's owner may rename it). Root running with a user's HOME falls back. */
static bool
_is_private_path(const char *path)
{
#ifdef _WIN32
    (void)path;
    return true;
#else
    char partial[PYI_PATH_MAX];
    struct stat info;
    size_t i;

    if (snprintf(partial, PYI_PATH_MAX, "%s", path) >= PYI_PATH_MAX) {
        return false;
    }
    for (i = 1; ; i++) {
        char kept = partial[i];
        if (kept != '/' && kept != '\0') {
            continue;
        }
        partial[i] = '\0';
        if (lstat(partial, &info) == 0) {
            if (!S_ISDIR(info.st_mode) || (info.st_uid != geteuid() && info.st_uid != 0) ||
                ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (info.st_mode & S_ISVTX) == 0)) {
                return false;
            }
        } else if (errno != ENOENT) {
            return false;
        }
        partial[i] = kept;
        if (kept == '\0') {
            return true;
        }
    }
#endif
}

/* Whether the agent that started this process inside its sandbox (core/network/door.py) names
 * `root` as the runtime root it was itself started from, so checked: unprivileged bubblewrap maps
 * only the user, and inside it root's folders look like nobody's to `_is_private_path`. The runtime
 * folder's own checks still hold. Kept for the restart on Linux; the program's runtime hook removes
 * it (hooks/rthook_library_path.py), so that the command never sees it. */
static bool
_checked_by_the_agent(const char *root)
{
#ifdef _WIN32
    (void)root;
    return false;
#else
    char *given = pyi_getenv(CHECKED_VARIABLE);
    bool same = given != NULL && strcmp(given, root) == 0;
    free(given);
    return same;
#endif
}

static int
_make_folder(const char *path)
{
#ifdef _WIN32
    wchar_t path_w[PYI_PATH_MAX];
    if (pyi_win32_utf8_to_wcs(path, path_w, PYI_PATH_MAX) == NULL) {
        return -1;
    }
    return (CreateDirectoryW(path_w, NULL) || GetLastError() == ERROR_ALREADY_EXISTS) ? 0 : -1;
#else
    return (mkdir(path, 0700) == 0 || errno == EEXIST) ? 0 : -1;
#endif
}

/* `path` and the folders above it, like `mkdir -p` (new ones private). */
static int
_make_folders(const char *path)
{
    char partial[PYI_PATH_MAX];
    size_t i;
    size_t start = 1;

#ifdef _WIN32
    start = 3; /* past "C:\" */
#endif
    if (snprintf(partial, PYI_PATH_MAX, "%s", path) >= PYI_PATH_MAX) {
        return -1;
    }
    for (i = start; partial[i] != '\0'; i++) {
        if (partial[i] == PYI_SEP) {
            partial[i] = '\0';
            if (pyi_path_exists(partial) == 0 && _make_folder(partial) < 0) {
                return -1;
            }
            partial[i] = PYI_SEP;
        }
    }
    return _make_folder(path);
}

/* Whether `folder` holds every file the archive unpacks, each of its size. */
static bool
_is_whole(const struct ARCHIVE *archive, const char *folder)
{
    const struct TOC_ENTRY *entry;
    char path[PYI_PATH_MAX];

    if (!_is_private_folder(folder)) {
        return false;
    }
    for (entry = archive->toc; entry < archive->toc_end; entry = pyi_archive_next_toc_entry(archive, entry)) {
        if (!_unpacks(entry)) {
            continue;
        }
        if (snprintf(path, PYI_PATH_MAX, "%s%c%s", folder, PYI_SEP, entry->name) >= PYI_PATH_MAX) {
            return false;
        }
#ifdef _WIN32
        {
            wchar_t path_w[PYI_PATH_MAX];
            WIN32_FILE_ATTRIBUTE_DATA data;
            if (pyi_win32_utf8_to_wcs(path, path_w, PYI_PATH_MAX) == NULL ||
                !GetFileAttributesExW(path_w, GetFileExInfoStandard, &data)) {
                return false;
            }
            if (entry->typecode != ARCHIVE_ITEM_SYMLINK &&
                (data.nFileSizeHigh != 0 || data.nFileSizeLow != entry->uncompressed_length)) {
                return false;
            }
        }
#else
        {
            struct stat info;
            if (lstat(path, &info) != 0) {
                return false;
            }
            if (entry->typecode != ARCHIVE_ITEM_SYMLINK &&
                (!S_ISREG(info.st_mode) || (uint64_t)info.st_size != entry->uncompressed_length)) {
                return false;
            }
        }
#endif
    }
    return true;
}

static int
_rename_folder(const char *from, const char *to)
{
#ifdef _WIN32
    wchar_t from_w[PYI_PATH_MAX];
    wchar_t to_w[PYI_PATH_MAX];
    if (pyi_win32_utf8_to_wcs(from, from_w, PYI_PATH_MAX) == NULL || pyi_win32_utf8_to_wcs(to, to_w, PYI_PATH_MAX) == NULL) {
        return -1;
    }
    for (int attempt = 0; attempt < 10; attempt++) {
        if (MoveFileExW(from_w, to_w, 0)) {
            return 0;
        }
        if (GetLastError() != ERROR_ACCESS_DENIED && GetLastError() != ERROR_SHARING_VIOLATION) {
            return -1;
        }
        Sleep(50); /* an antivirus scanning the new DLLs holds them a moment */
    }
    return -1;
#else
    return rename(from, to);
#endif
}

/* Unpack the archive into a private temporary folder beside `target`, then rename it into place.
 * The rename fails when `target` exists: a copy another start renamed first is used; a damaged
 * one is moved aside, replaced at once, and only then deleted. */
static int
_unpack(struct PYI_CONTEXT *pyi_ctx, const char *root, const char *id, const char *target)
{
    char temporary[PYI_PATH_MAX];
    char aside[PYI_PATH_MAX];
    unsigned long pid;
    unsigned long nonce;
    int status;

#ifdef _WIN32
    LARGE_INTEGER counter;
    QueryPerformanceCounter(&counter);
    pid = (unsigned long)GetCurrentProcessId();
    nonce = (unsigned long)(counter.QuadPart & 0xffffffff);
#else
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    pid = (unsigned long)getpid();
    nonce = (unsigned long)now.tv_nsec ^ ((unsigned long)now.tv_sec << 20);
#endif
    /* The nonce: starts in two containers that share a home folder can have the same pid. */
    if (snprintf(temporary, PYI_PATH_MAX, "%s%c.%s.%lu.%lx.part", root, PYI_SEP, id, pid, nonce) >= PYI_PATH_MAX ||
        snprintf(aside, PYI_PATH_MAX, "%s%c.%s.%lu.%lx.old", root, PYI_SEP, id, pid, nonce) >= PYI_PATH_MAX) {
        return -1;
    }
    if (_make_folder(temporary) < 0 || !_is_private_folder(temporary)) {
        return -1;
    }

    memcpy(pyi_ctx->application_home_dir, temporary, PYI_PATH_MAX);
    status = pyi_launch_extract_files_from_archive(pyi_ctx);
    pyi_ctx->application_home_dir[0] = '\0';
    if (status != 0) {
        pyi_recursive_rmdir(temporary);
        return -1;
    }

    if (_rename_folder(temporary, target) == 0) {
        return 0;
    }
    if (_is_whole(pyi_ctx->archive, target)) { /* another start got there first */
        pyi_recursive_rmdir(temporary);
        return 0;
    }
    if (_rename_folder(target, aside) == 0 && _rename_folder(temporary, target) == 0) {
        pyi_recursive_rmdir(aside);
        return 0;
    }
    pyi_recursive_rmdir(temporary);
    return _is_whole(pyi_ctx->archive, target) ? 0 : -1;
}

static bool
_is_elevated(const struct PYI_CONTEXT *pyi_ctx)
{
#ifdef _WIN32
    if (pyi_ctx->has_elevated_privileges == PYI_ELEVATED_PRIVILEGES_UAC) {
        HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
        return ntdll == NULL || GetProcAddress(ntdll, "wine_get_version") == NULL;
    }
#else
    if (geteuid() != getuid()) {
        return true;
    }
#endif
    return pyi_ctx->has_elevated_privileges != 0;
}

int
pyi_persistent_runtime_prepare(struct PYI_CONTEXT *pyi_ctx)
{
    const struct ARCHIVE *archive = pyi_ctx->archive;
    const struct TOC_ENTRY *entry;
    const char *id = _option_id(archive);
    char root[PYI_PATH_MAX];
    char target[PYI_PATH_MAX];

    if (id == NULL || _is_elevated(pyi_ctx) || _runtime_root(root) < 0) {
        return -1;
    }
    if (!_checked_by_the_agent(root) && !_is_private_path(root)) {
        return -1;
    }
    for (entry = archive->toc; entry < archive->toc_end; entry = pyi_archive_next_toc_entry(archive, entry)) {
        if (entry->typecode == ARCHIVE_ITEM_DEPENDENCY || entry->typecode == ARCHIVE_ITEM_SPLASH) {
            return -1;
        }
    }
    if (snprintf(target, PYI_PATH_MAX, "%s%c%s", root, PYI_SEP, id) >= PYI_PATH_MAX) {
        return -1;
    }

    if (!_is_whole(archive, target)) {
        PYI_DEBUG("LOADER: unpacking the persistent runtime to %s\n", target);
        if (_make_folders(root) < 0 || !_is_private_folder(root) || _unpack(pyi_ctx, root, id, target) < 0) {
            PYI_DEBUG("LOADER: no persistent runtime; unpacking to a temporary folder instead\n");
            return -1;
        }
    }
    memcpy(pyi_ctx->persistent_home_dir, target, PYI_PATH_MAX);
    PYI_DEBUG("LOADER: persistent runtime: %s\n", target);
    return 0;
}
