#!/usr/bin/env bash
# Builds felica and felica-sim in release mode and writes two Debian packages:
#   scripts/package.sh [--target TARGET]
#   .build/package/<TARGET>/felica_<version>_<arch>.deb
#   .build/package/<TARGET>/felica-sim_<version>_<arch>.deb
# TARGET is one of
#   bookworm-amd64  (the default) Debian 12 and later on amd64: built with the Swift on PATH,
#                   the Swift runtime linked in statically, so no Swift is needed where it runs;
#   trixie-amd64    Debian 13 and later on amd64: built with Debian's own Swift (swiftlang) in
#                   a trixie root (scripts/trixie-root.sh), linked against Debian's runtime
#                   (libswiftlang), so the packages are small;
#   trixie-arm64    the same for arm64 (Raspberry Pi OS based on trixie, …), cross-built on
#                   amd64 in that root; its programs are run once under qemu-user (for their
#                   version, man page and completions).
# The version is the one `felica --version` prints. Needs dpkg-dev (scripts/bootstrap.sh
# build); the trixie targets also need root (or sudo), debootstrap and, for arm64,
# qemu-user-static. Docs/install.md describes the packages and which system takes which.
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022

host_arch="$(dpkg --print-architecture)"
target=bookworm-$host_arch
while (($#)); do
  case "$1" in
    --target) [[ $# -ge 2 ]] || { echo "package: --target needs a value" >&2; exit 64; }; target="$2"; shift 2 ;;
    --target=*) target="${1#--target=}"; shift ;;
    *) echo "package: unknown argument '$1' (usage: scripts/package.sh [--target bookworm-amd64|trixie-amd64|trixie-arm64])" >&2; exit 64 ;;
  esac
done
case "$target" in
  "bookworm-$host_arch" | trixie-amd64 | trixie-arm64) ;;
  bookworm-*) echo "package: $target is built on a $target machine (this one is $host_arch)" >&2; exit 64 ;;
  *) echo "package: unknown target '$target' (bookworm-amd64, trixie-amd64 or trixie-arm64)" >&2; exit 64 ;;
esac
[[ "$target" == trixie-* && "$host_arch" != amd64 ]] \
  && { echo "package: the trixie targets are built on an amd64 machine (this one is $host_arch)" >&2; exit 64; }

out=.build/package/$target
maintainer="${DEBFULLNAME:-The felica authors} <${DEBEMAIL:-felica@users.noreply.github.com}>"
# File dates and the changelog's date: the commit's, so two builds of one commit match.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"
commit="${FELICA_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"

# A trixie target is built inside the trixie root, by this script run again there.
if [[ "$target" == trixie-* && -z "${FELICA_IN_TRIXIE_ROOT:-}" ]]; then
  [[ "$target" == trixie-arm64 ]] && ! command -v qemu-aarch64-static >/dev/null \
    && { echo "package: qemu-aarch64-static is missing; run scripts/bootstrap.sh build" >&2; exit 1; }
  scripts/trixie-root.sh >/dev/null
  exec scripts/trixie-root.sh run env FELICA_IN_TRIXIE_ROOT=1 SOURCE_DATE_EPOCH="$SOURCE_DATE_EPOCH" \
    FELICA_COMMIT="$commit" DEBFULLNAME="${DEBFULLNAME:-}" DEBEMAIL="${DEBEMAIL:-}" \
    scripts/package.sh --target "$target"
fi

for tool in dpkg-deb dpkg-shlibdeps strip gzip; do
  command -v "$tool" >/dev/null || { echo "package: $tool is missing; run scripts/bootstrap.sh build" >&2; exit 1; }
done

# run PROGRAM ARG…: a built program, on this machine (under qemu-user for arm64).
run=()
shlibdeps_flags=()
case "$target" in
  bookworm-*)
    scratch=.build/static
    # --no-export-dynamic undoes the -export-dynamic of the toolchain's static-stdlib-args.lnk:
    # nothing loads a plug-in into these programs, and an exported symbol is one
    # --gc-sections must keep (about 0.6 MiB of symbol tables and unused public code).
    build_flags=(-c release --static-swift-stdlib --scratch-path "$scratch" -Xswiftc -warnings-as-errors
      -Xlinker --no-export-dynamic)
    # With the toolchain's lld, relative relocations are packed (DT_RELR, glibc 2.36 and
    # later; Debian 12 has 2.36): the dynamic loader applies ~30000 of them at every start,
    # a tenth of the start-up time of `felica --version`, and their table is 0.7 MiB.
    # gold cannot.
    swift_dir="$(dirname "$(readlink -f "$(command -v swift)")")"
    if [[ -x "$swift_dir/ld.lld" ]]; then
      build_flags+=(-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs)
    fi
    arch="$host_arch"
    swift_depends=""
    # Loaded at first use (dlopen) rather than linked, so dpkg-shlibdeps does not see them:
    # libcurl for `watch --post` (CURLOPT_PROTOCOLS_STR is 7.85's), libmosquitto for --mqtt
    # (mosquitto_connect_async and the 5.0-era calls used are all in 1.6, Debian 11's),
    # libcrypto (libssl3) for the Lite-S card key (the EVP calls used are all in OpenSSL 3.0),
    # SQLite for the history (sqlite3_system_errno is 3.12's).
    dlopen_depends="libcurl4 (>= 7.85.0), libmosquitto1 (>= 1.6), libssl3 (>= 3.0.0), libsqlite3-0 (>= 3.12.0)"
    strip_tool=strip
    echo "package: building (release, static Swift runtime, in $scratch)" >&2
    ;;
  trixie-*)
    arch="${target#trixie-}"
    scratch=.build/trixie/release-$arch
    # Debian's Swift runtime: where libswiftlang puts it (the binaries' RUNPATH).
    runtime=/usr/libexec/swift/lib/swift/linux
    # Linked with lld, for both architectures: with Debian's default linker (GNU ld) these
    # programs get no read-only-after-relocation segment (lintian: hardening-no-relro).
    # Relative relocations packed (DT_RELR, glibc 2.36 and later) as for bookworm.
    build_flags=(-c release --scratch-path "$scratch" -Xswiftc -warnings-as-errors -Xswiftc -use-ld=lld
      -Xlinker -z -Xlinker pack-relative-relocs)
    strip_tool=strip
    if [[ "$arch" == arm64 ]]; then
      # The arm64 swiftlang, unpacked by trixie-root.sh: its resource directory holds the
      # arm64 Swift modules and runtime. The RUNPATH is where libswiftlang:arm64 puts them.
      arm64_swift=.build/trixie/arm64-swift
      build_flags+=(--triple aarch64-unknown-linux-gnu
        -Xswiftc -resource-dir -Xswiftc "$(realpath "$arm64_swift/usr/libexec/swift/lib/swift")"
        -Xswiftc -no-toolchain-stdlib-rpath -Xlinker -rpath -Xlinker "$runtime")
      run=(qemu-aarch64-static -L / -E "LD_LIBRARY_PATH=$(realpath "$arm64_swift$runtime")")
      strip_tool=aarch64-linux-gnu-strip
      # SwiftPM reads .pc files itself and keeps their -L: the amd64 ones would put
      # /usr/lib/x86_64-linux-gnu (and its libc.so linker script) into the arm64 link.
      export PKG_CONFIG_PATH=/usr/lib/aarch64-linux-gnu/pkgconfig
      export DEB_HOST_ARCH=arm64 DEB_HOST_MULTIARCH=aarch64-linux-gnu
    fi
    # dpkg-shlibdeps learns that the runtime's libraries (unversioned sonames, which it
    # would otherwise skip) come from libswiftlang, from a symbols file made from the
    # libswiftlang package itself, unpacked as a package tree beside the root.
    swiftlang_tree=.build/trixie/libswiftlang-$arch
    if [[ ! -f "$swiftlang_tree/DEBIAN/symbols" ]]; then
      deb="$(ls /var/cache/apt/archives/libswiftlang_*_"$arch".deb | tail -n 1)"
      rm -rf "$swiftlang_tree"
      dpkg-deb -R "$deb" "$swiftlang_tree"
      swift_version="$(dpkg-deb -f "$deb" Version)"
      swift_version="${swift_version%-*}"
      tree="$(realpath "$swiftlang_tree")"
      mkdir -p "$swiftlang_tree.src/debian"
      printf 'Source: swiftlang\n\nPackage: libswiftlang\nArchitecture: any\n' >"$swiftlang_tree.src/debian/control"
      (cd "$swiftlang_tree.src" && dpkg-gensymbols -q -plibswiftlang -P"$tree" -v"$swift_version" -a"$arch" \
        -O"$tree/DEBIAN/symbols" -e"$tree$runtime/*.so" >"$tree.gensymbols.log" 2>&1) || true
      [[ -s "$swiftlang_tree/DEBIAN/symbols" ]] \
        || { tail -n 5 "$tree.gensymbols.log" >&2; echo "package: cannot make the symbols file of $deb" >&2; exit 1; }
    fi
    # Swift's runtime keeps no ABI from one minor release to the next on Linux: the
    # packages take the libswiftlang of the 6.0 series they were built with, no later one.
    swift_series="$(dpkg-query -W -f '${Version}' libswiftlang | grep -oE '^[0-9]+\.[0-9]+')"
    [[ -n "$swift_series" ]] || { echo "package: libswiftlang is not installed in the trixie root" >&2; exit 1; }
    swift_depends="libswiftlang (<< ${swift_series%.*}.$((${swift_series#*.} + 1))~)"
    # As for bookworm; trixie's libcurl and libssl have the t64 names.
    dlopen_depends="libcurl4t64 (>= 7.85.0), libmosquitto1 (>= 1.6), libssl3t64 (>= 3.0.0), libsqlite3-0 (>= 3.12.0)"
    shlibdeps_flags=(-S"$(realpath "$swiftlang_tree")")
    echo "package: building (release, Debian's Swift $(swift --version 2>&1 | grep -o 'version [0-9.]*' | head -n 1), for $arch, in $scratch)" >&2
    ;;
esac

for product in felica felica-sim; do
  swift build "${build_flags[@]}" --product "$product" >&2
done
bin="$(swift build "${build_flags[@]}" --show-bin-path)"

version="$("${run[@]}" "$bin/felica" --version)"
sim_version="$("${run[@]}" "$bin/felica-sim" --version)"
[[ "$version" == "$sim_version" ]] || { echo "package: felica says $version, felica-sim says $sim_version" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out"

# install_file SRC DEST MODE: a file into the package tree.
install_file() { install -D -m "$3" "$1" "$2"; }
gz() { gzip -9 -n -c "$1" >"$2"; }

# stage PACKAGE BINARY: the tree common to both packages: the binary (stripped), its man
# page and completions, copyright, changelog and lintian overrides.
stage() {
  local package="$1" program="$2" root="$out/$1"
  install_file "$bin/$program" "$root/usr/bin/$program" 0755
  "$strip_tool" --remove-section=.comment --remove-section=.note --strip-unneeded "$root/usr/bin/$program"
  mkdir -p "$root/usr/share/man/man1"
  "${run[@]}" "$bin/$program" --generate-manual >"$out/$program.1"
  gz "$out/$program.1" "$root/usr/share/man/man1/$program.1.gz"
  mkdir -p "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
    "$root/usr/share/fish/vendor_completions.d"
  "${run[@]}" "$bin/$program" --generate-completion-script bash >"$root/usr/share/bash-completion/completions/$program"
  "${run[@]}" "$bin/$program" --generate-completion-script zsh >"$root/usr/share/zsh/vendor-completions/_$program"
  "${run[@]}" "$bin/$program" --generate-completion-script fish >"$root/usr/share/fish/vendor_completions.d/$program.fish"
  install_file packaging/copyright "$root/usr/share/doc/$package/copyright" 0644
  cat >"$out/changelog" <<EOF
$package ($version) unstable; urgency=medium

  * Release $version, built from commit $commit.

 -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")
EOF
  gz "$out/changelog" "$root/usr/share/doc/$package/changelog.gz"
  install_file "packaging/$package.lintian-overrides" "$root/usr/share/lintian/overrides/$package" 0644
  if [[ "$target" == trixie-* ]]; then
    # What trixie's lintian says of these packages only, with the reason.
    cat >>"$root/usr/share/lintian/overrides/$package" <<EOF
# libswiftlang puts Debian's Swift runtime in $runtime, outside the loader's
# search path, and adds no ld.so.conf entry: a program linking it names it in its RUNPATH
# (Debian's own Swift programs do the same, relative to \$ORIGIN).
$package: custom-library-search-path RUNPATH $runtime [usr/bin/$program]
EOF
    if [[ "$package" == felica ]]; then cat >>"$root/usr/share/lintian/overrides/$package" <<EOF
# The udev rule gives the seat's user and plugdev access to the readers; the package ships
# no AppStream metadata, so no modalias is provided for software centres to match.
$package: appstream-metadata-missing-modalias-provide usr/lib/udev/rules.d/60-felica.rules
EOF
    fi
  fi
}

# control PACKAGE DESCRIPTION EXTRA-FIELDS: DEBIAN/control with Depends from dpkg-shlibdeps.
control() {
  local package="$1" description="$2" extra="$3" root="$out/$1" shlibs
  mkdir -p "$out/shlibs/debian" "$root/DEBIAN"
  printf 'Source: felica\n\nPackage: %s\nArchitecture: any\n' "$package" >"$out/shlibs/debian/control"
  shlibs="$(cd "$out/shlibs" && dpkg-shlibdeps "${shlibdeps_flags[@]}" -O -e"$(realpath "../$package/usr/bin/$package")" 2>/dev/null)"
  shlibs="${shlibs#shlibs:Depends=}"
  local depends="$shlibs${extra:+, $extra}"
  local size
  size="$(du -k -s --apparent-size "$root" | cut -f1)"
  {
    echo "Package: $package"
    echo "Version: $version"
    echo "Architecture: $arch"
    echo "Maintainer: $maintainer"
    echo "Installed-Size: $size"
    echo "Depends: $depends"
    [[ -n "${recommends:-}" ]] && echo "Recommends: $recommends"
    echo "Section: utils"
    echo "Priority: optional"
    echo "Description: $description"
    cat "packaging/$package.description" | sed -e 's/^$/./' -e 's/^/ /'
  } >"$root/DEBIAN/control"
  for script in postinst prerm postrm; do
    [[ -f "packaging/$package.$script" ]] && install_file "packaging/$package.$script" "$root/DEBIAN/$script" 0755
  done
  local top=(usr)
  [[ -d "$root/lib" ]] && top+=(lib)   # the blacklist's /lib/modprobe.d on Debian 12
  (cd "$root" && find "${top[@]}" -type f -print0 | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
  chmod 0644 "$root/DEBIAN/md5sums"
  find "$root" -newermt "@$SOURCE_DATE_EPOCH" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  dpkg-deb --root-owner-group -Zxz --build "$root" "$out/${package}_${version}_${arch}.deb" >/dev/null
  rm -rf "$out/shlibs"
}

# The blacklist goes into the modprobe.d the system's own packages (kmod, systemd) own, so
# that dpkg does not take the directory for felica's and warn, at the purge, that it is not
# empty: /lib/modprobe.d on Debian 12, /usr/lib/modprobe.d from trixie on. Asked of dpkg on
# the build system (the trixie root for a trixie target); the target's name decides when
# neither is registered.
modprobe_dir=/usr/lib/modprobe.d
if ! dpkg-query -S /usr/lib/modprobe.d >/dev/null 2>&1; then
  if dpkg-query -S /lib/modprobe.d >/dev/null 2>&1 || [[ "$target" == bookworm-* ]]; then modprobe_dir=/lib/modprobe.d; fi
fi
# Wireshark's global Lua plugin directory (`tshark -G folders`): the dissector loads without -X.
case "$arch" in
  amd64) multiarch=x86_64-linux-gnu ;;
  arm64) multiarch=aarch64-linux-gnu ;;
  *) multiarch="$(dpkg-architecture -a"$arch" -qDEB_HOST_MULTIARCH)" ;;
esac

stage felica felica
install_file packaging/60-felica.rules "$out/felica/usr/lib/udev/rules.d/60-felica.rules" 0644
install_file packaging/felica-blacklist.conf "$out/felica$modprobe_dir/felica.conf" 0644
install_file "packaging/felica-watch@.service" "$out/felica/usr/lib/systemd/system/felica-watch@.service" 0644
install_file Wireshark/felica.lua "$out/felica/usr/lib/$multiarch/wireshark/plugins/felica.lua" 0644
# The README and the guides, laid out as in the source tree so that their links hold; the
# help and man pages name them there.
install_file README.md "$out/felica/usr/share/doc/felica/README.md" 0644
for doc in Docs/*.md Docs/*.svg; do
  install_file "$doc" "$out/felica/usr/share/doc/felica/$doc" 0644
done
recommends="pcscd, libccid" control felica "read Japanese FeliCa cards (Suica, Edy, nanaco, WAON) from USB readers" \
  "${swift_depends:+$swift_depends, }$dlopen_depends"

stage felica-sim felica-sim
recommends="vsmartcard-vpcd" control felica-sim "stand-ins for FeliCa readers, to test felica without hardware" \
  "${swift_depends:+$swift_depends, }$dlopen_depends, umockdev, gir1.2-umockdev-1.0, python3, python3-gi"

rm -f "$out/changelog" "$out"/*.1
for package in felica felica-sim; do rm -rf "${out:?}/$package"; done
ls -l "$out"/*.deb >&2
