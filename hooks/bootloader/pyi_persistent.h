/*
 * deepseek-agent's addition to PyInstaller's bootloader (pyi_persistent.c). Distributed under the
 * GNU General Public License (version 2 or later) with the bootloader exception.
 */

#ifndef PYI_PERSISTENT_H
#define PYI_PERSISTENT_H

struct PYI_CONTEXT;

/* With the run-time option `pyi-persistent-runtime <id>`: make sure the runtime is unpacked in the
 * user's cache and store its folder in `persistent_home_dir`; 0 when the exe may start from there
 * as a one-folder build, -1 when it must unpack to a temporary folder as usual. */
int pyi_persistent_runtime_prepare(struct PYI_CONTEXT *pyi_ctx);

#endif /* PYI_PERSISTENT_H */
