#!/usr/bin/env bash
# Builds felica and felica-sim in release mode with the Swift runtime linked in statically,
# and writes two Debian packages that need no Swift toolchain:
#   .build/package/felica_<version>_<arch>.deb
#   .build/package/felica-sim_<version>_<arch>.deb
# The version is the one `felica --version` prints. Needs dpkg-dev (scripts/bootstrap.sh build).
# Docs/install.md describes what the packages install.
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022

scratch=.build/static
out=.build/package
maintainer="${DEBFULLNAME:-The felica authors} <${DEBEMAIL:-felica@users.noreply.github.com}>"

for tool in dpkg-deb dpkg-shlibdeps strip gzip; do
  command -v "$tool" >/dev/null || { echo "package: $tool is missing; run scripts/bootstrap.sh build" >&2; exit 1; }
done

# --no-export-dynamic undoes the -export-dynamic of the toolchain's static-stdlib-args.lnk:
# nothing loads a plug-in into these programs, and an exported symbol is one --gc-sections
# must keep (about 0.6 MiB of symbol tables and unused public code).
build_flags=(-c release --static-swift-stdlib --scratch-path "$scratch" -Xswiftc -warnings-as-errors
  -Xlinker --no-export-dynamic)
# With the toolchain's lld, relative relocations are packed (DT_RELR, glibc 2.36 and later,
# Debian 12 has 2.36): the dynamic loader applies ~30000 of them at every start, a tenth
# of the start-up time of `felica --version`, and their table is 0.7 MiB. gold cannot.
swift_dir="$(dirname "$(readlink -f "$(command -v swift)")")"
if [[ -x "$swift_dir/ld.lld" ]]; then
  build_flags+=(-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs)
fi
echo "package: building (release, static Swift runtime, in $scratch)" >&2
for product in felica felica-sim; do
  swift build "${build_flags[@]}" --product "$product" >&2
done
bin="$(swift build "${build_flags[@]}" --show-bin-path)"

version="$("$bin/felica" --version)"
sim_version="$("$bin/felica-sim" --version)"
[[ "$version" == "$sim_version" ]] || { echo "package: felica says $version, felica-sim says $sim_version" >&2; exit 1; }
arch="$(dpkg --print-architecture)"
# File dates and the changelog's date: the commit's, so two builds of one commit match.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

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
  strip --remove-section=.comment --remove-section=.note --strip-unneeded "$root/usr/bin/$program"
  mkdir -p "$root/usr/share/man/man1"
  "$bin/$program" --generate-manual >"$out/$program.1"
  gz "$out/$program.1" "$root/usr/share/man/man1/$program.1.gz"
  mkdir -p "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
    "$root/usr/share/fish/vendor_completions.d"
  "$bin/$program" --generate-completion-script bash >"$root/usr/share/bash-completion/completions/$program"
  "$bin/$program" --generate-completion-script zsh >"$root/usr/share/zsh/vendor-completions/_$program"
  "$bin/$program" --generate-completion-script fish >"$root/usr/share/fish/vendor_completions.d/$program.fish"
  install_file packaging/copyright "$root/usr/share/doc/$package/copyright" 0644
  cat >"$out/changelog" <<EOF
$package ($version) unstable; urgency=medium

  * Release $version, built from commit $commit.

 -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")
EOF
  gz "$out/changelog" "$root/usr/share/doc/$package/changelog.gz"
  install_file "packaging/$package.lintian-overrides" "$root/usr/share/lintian/overrides/$package" 0644
}

# control PACKAGE DESCRIPTION EXTRA-FIELDS: DEBIAN/control with Depends from dpkg-shlibdeps.
control() {
  local package="$1" description="$2" extra="$3" root="$out/$1" shlibs
  mkdir -p "$out/shlibs/debian" "$root/DEBIAN"
  printf 'Source: felica\n\nPackage: %s\nArchitecture: any\n' "$package" >"$out/shlibs/debian/control"
  shlibs="$(cd "$out/shlibs" && dpkg-shlibdeps -O -e"$(realpath "../$package/usr/bin/$package")" 2>/dev/null)"
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
  (cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
  chmod 0644 "$root/DEBIAN/md5sums"
  find "$root" -newermt "@$SOURCE_DATE_EPOCH" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  dpkg-deb --root-owner-group -Zxz --build "$root" "$out/${package}_${version}_${arch}.deb" >/dev/null
  rm -rf "$out/shlibs"
}

stage felica felica
install_file packaging/60-felica.rules "$out/felica/usr/lib/udev/rules.d/60-felica.rules" 0644
install_file packaging/felica-blacklist.conf "$out/felica/usr/lib/modprobe.d/felica.conf" 0644
install_file "packaging/felica-watch@.service" "$out/felica/usr/lib/systemd/system/felica-watch@.service" 0644
install_file Docs/install.md "$out/felica/usr/share/doc/felica/install.md" 0644
recommends="pcscd, libccid" control felica "read Japanese FeliCa cards (Suica, Edy, nanaco, WAON) from USB readers" ""

stage felica-sim felica-sim
recommends="vsmartcard-vpcd" control felica-sim "stand-ins for FeliCa readers, to test felica without hardware" \
  "umockdev, gir1.2-umockdev-1.0, python3, python3-gi"

rm -f "$out/changelog" "$out"/*.1
for package in felica felica-sim; do rm -rf "${out:?}/$package"; done
ls -l "$out"/*.deb >&2
