#!/usr/bin/env bash
# Builds the C library and installs it under PREFIX the way C and C++ projects expect:
#
#   PREFIX/include/depositkit.h
#   PREFIX/lib/libdepositkit.so.VERSION         the shared library (SONAME libdepositkit.so.0.MINOR)
#   PREFIX/lib/libdepositkit.so.0.MINOR         -> libdepositkit.so.VERSION (what programs load)
#   PREFIX/lib/libdepositkit.so                 -> libdepositkit.so.0.MINOR (what -ldepositkit finds)
#   PREFIX/lib/libdepositkit.a                  the static library
#   PREFIX/lib/pkgconfig/depositkit.pc          Cflags, Libs, and Libs.private: the native libraries
#                                               the static library needs, as rustc prints them
#                                               (`--print native-static-libs`) for this build
#
# Then `pkg-config --cflags --libs depositkit` (PKG_CONFIG_PATH=PREFIX/lib/pkgconfig when PREFIX is
# not a system prefix) gives the shared link, `pkg-config --static --libs depositkit` adds
# Libs.private, and CMake's `pkg_check_modules(DEPOSITKIT REQUIRED IMPORTED_TARGET depositkit)`
# finds it (CMAKE_PREFIX_PATH=PREFIX): see examples/c-make and examples/c-cmake.
#
#   scripts/install-c.sh [options] PREFIX
#     --debug            install the debug build (default: --release, the production library)
#     --features LIST    cargo features of depositkit-ffi, e.g. `devnet` (the in-process emulator
#                        for tests; the .pc then says devnet=yes, and programs define
#                        DEPOSITKIT_DEVNET to declare its functions). Default: none (production).
#     --libdir DIR       where the libraries go: relative to PREFIX (default lib; e.g.
#                        lib/x86_64-linux-gnu) or absolute
#
# PREFIX must be absolute. DESTDIR (environment) stages the files under $DESTDIR$PREFIX while the
# .pc still names PREFIX, as packagers expect. Run `ldconfig` after installing into a system
# prefix. The build is `cargo rustc -p depositkit-ffi --lib [--release] [--features ...] --
# --print native-static-libs`, in CARGO_TARGET_DIR (default target/); scripts/test-c.sh runs the
# same command, so installing what it tested costs no second build.
#
# Environment: CARGO_TARGET_DIR, DESTDIR. Exits non-zero when anything fails.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"

usage() {
  echo "usage: $0 [--debug] [--features LIST] [--libdir DIR] PREFIX" >&2
  exit 2
}

profile=release
release=(--release)
features=""
libdir_arg=lib
prefix=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --debug) profile=debug release=() ;;
    --features)
      [[ $# -ge 2 ]] || usage
      features="$2"
      shift
      ;;
    --libdir)
      [[ $# -ge 2 ]] || usage
      libdir_arg="$2"
      shift
      ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    -*) usage ;;
    *)
      [[ -z $prefix ]] || usage
      prefix="$1"
      ;;
  esac
  shift
done
[[ -n $prefix ]] || usage
if [[ $prefix != /* ]]; then
  echo "install-c: PREFIX must be an absolute path, not \"$prefix\"" >&2
  exit 2
fi
prefix="${prefix%/}"
[[ -n $prefix ]] || prefix=/
if ! command -v readelf >/dev/null 2>&1; then
  echo "install-c: readelf not found (binutils): it reads the library's SONAME" >&2
  exit 1
fi

feature_args=()
[[ -z $features ]] || feature_args=(--features "$features")

# --- build ------------------------------------------------------------------------------------
cd "$root"
log="$(mktemp "${TMPDIR:-/tmp}/depositkit-install-c.XXXXXX")"
trap 'rm -f "$log"' EXIT
build=(cargo rustc -p depositkit-ffi --lib "${release[@]}" "${feature_args[@]}" --
  --print native-static-libs)
echo "install-c: ${build[*]}"
# --color never: the note is parsed. cargo replays it when the library is up to date.
if ! CARGO_TERM_COLOR=never "${build[@]}" 2>"$log"; then
  cat "$log" >&2
  exit 1
fi
native_libs="$(sed -n 's/^note: native-static-libs: //p' "$log" | tail -n 1)"
if [[ -z $native_libs ]]; then
  cat "$log" >&2
  echo "install-c: rustc printed no native-static-libs for libdepositkit.a" >&2
  exit 1
fi

built="$target_dir/$profile"
shared="$built/libdepositkit.so"
static="$built/libdepositkit.a"
for file in "$shared" "$static" "$root/include/depositkit.h"; do
  if [[ ! -f $file ]]; then
    echo "install-c: $file is missing after the build" >&2
    exit 1
  fi
done
# The version is the crate's; the SONAME is what ffi/build.rs linked into the library.
version="$(cargo pkgid -p depositkit-ffi | sed 's/.*[#@]//')"
if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]]; then
  echo "install-c: cannot read depositkit-ffi's version from \`cargo pkgid\` (\"$version\")" >&2
  exit 1
fi
soname="$(readelf -d "$shared" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')"
if [[ $soname != libdepositkit.so.* ]]; then
  echo "install-c: $shared has no versioned SONAME (\"$soname\"): ffi/build.rs sets it" >&2
  exit 1
fi
real="libdepositkit.so.$version"

# --- install ----------------------------------------------------------------------------------
if [[ $libdir_arg == /* ]]; then
  libdir="${libdir_arg%/}"
  pc_libdir="$libdir"
else
  libdir="$prefix/${libdir_arg%/}"
  pc_libdir="\${exec_prefix}/${libdir_arg%/}"
fi
libdir="${libdir//\/\//\/}"
includedir="${prefix%/}/include"
dest="${DESTDIR:-}"

install -d "$dest$includedir" "$dest$libdir/pkgconfig"
install -m 644 "$root/include/depositkit.h" "$dest$includedir/depositkit.h"
install -m 755 "$shared" "$dest$libdir/$real"
if [[ $soname != "$real" ]]; then
  ln -sfn "$real" "$dest$libdir/$soname"
fi
ln -sfn "$soname" "$dest$libdir/libdepositkit.so"
install -m 644 "$static" "$dest$libdir/libdepositkit.a"

devnet=no
[[ ,${features// /,}, == *,devnet,* ]] && devnet=yes
description="Embeddable deposit engine: deposit addresses, watcher, sweeper, user lookup (C ABI)"
[[ $devnet == no ]] || description="$description; with the devnet emulator (define DEPOSITKIT_DEVNET)"
cat >"$dest$libdir/pkgconfig/depositkit.pc" <<EOF
prefix=$prefix
exec_prefix=\${prefix}
libdir=$pc_libdir
includedir=\${prefix}/include
# yes when the library was built with the cargo feature devnet (depositkit_devnet_*; compile
# with -DDEPOSITKIT_DEVNET to declare them). Production builds: no.
devnet=$devnet

Name: depositkit
Description: $description
Version: $version
Libs: -L\${libdir} -ldepositkit
Libs.private: $native_libs
Cflags: -I\${includedir}
EOF

echo "install-c: installed depositkit $version ($profile${features:+, features $features}) under" \
  "$dest$prefix:"
for file in "$includedir/depositkit.h" "$libdir/$real" "$libdir/$soname" \
  "$libdir/libdepositkit.so" "$libdir/libdepositkit.a" "$libdir/pkgconfig/depositkit.pc"; do
  if [[ -L $dest$file ]]; then
    echo "  $dest$file -> $(readlink "$dest$file")"
  else
    echo "  $dest$file"
  fi
done
echo "install-c: static links need Libs.private: $native_libs"
