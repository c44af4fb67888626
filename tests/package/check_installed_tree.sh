#!/usr/bin/env bash
# check_installed_tree.sh install|deb BUILD_DIR APP_ID VERSION GUI(0|1) TRAINER(0|1)
#
#   install  `cmake --install BUILD_DIR --prefix <scratch>/prefix`
#   deb      `cpack -G DEB --config BUILD_DIR/CPackConfig.cmake` in a scratch folder, then
#            `dpkg -x` of the package into <scratch>/root (installed tree: <root>/usr)
#
# Then, in the installed tree: exactly the expected files, nothing else; executables that find
# all their libraries; `tokenbench --version` names the installed trainer (libexec/tokenbench);
# `tokenbench-trainer --version` prints the version; the desktop entry, metainfo and icons are in
# place (and validate, when the validators are installed). Exit 77 (skip) when a tool the mode
# needs is missing.
set -euo pipefail

mode=$1 build=$2 app_id=$3 version=$4 gui=$5 trainer=$6

need() {
  command -v "$1" >/dev/null 2>&1 || { echo "skipping: $1 is not installed ($2)"; exit 77; }
}
failed=0
fail() { echo "FAIL: $*"; failed=1; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

case $mode in
  install)
    prefix=$scratch/prefix
    cmake --install "$build" --prefix "$prefix" >"$scratch/install.log" 2>&1 ||
      { cat "$scratch/install.log"; echo "FAIL: cmake --install exited $?"; exit 1; }
    ;;
  deb)
    need dpkg-deb "package dpkg"
    need dpkg-shlibdeps "package dpkg-dev: fills the package's Depends"
    mkdir "$scratch/out"
    (cd "$scratch/out" && cpack -G DEB --config "$build/CPackConfig.cmake") >"$scratch/cpack.log" 2>&1 ||
      { cat "$scratch/cpack.log"; echo "FAIL: cpack exited with an error"; exit 1; }
    deb=$scratch/out/tokenbench_${version}-1_$(dpkg --print-architecture).deb
    [[ -f $deb ]] || { ls -l "$scratch/out"; cat "$scratch/cpack.log"; echo "FAIL: no $deb"; exit 1; }
    echo "package: $(basename "$deb"), $(( $(stat -c %s "$deb") / 1024 )) KiB"

    field() { dpkg-deb --field "$deb" "$1"; }
    [[ $(field Package) == tokenbench ]] || fail "Package is '$(field Package)'"
    [[ $(field Version) == "$version-1" ]] || fail "Version is '$(field Version)', expected $version-1"
    [[ $(field Section) == science ]] || fail "Section is '$(field Section)'"
    [[ -n $(field Maintainer) ]] || fail "no Maintainer"
    depends=$(field Depends)
    echo "Depends: $depends"
    expected_deps=(libc6 libstdc++6 libqt6core6)
    [[ $gui == 1 ]] && expected_deps+=(libqt6widgets6 libqcustomplot)
    [[ $trainer == 1 ]] && expected_deps+=(libtorch)
    for dep in "${expected_deps[@]}"; do
      [[ $depends == *"$dep"* ]] || fail "Depends lacks $dep (dpkg-shlibdeps should add it)"
    done
    dpkg-deb --extract "$deb" "$scratch/root"
    prefix=$scratch/root/usr
    ;;
  *) echo "usage: check_installed_tree.sh install|deb BUILD_DIR APP_ID VERSION GUI TRAINER" >&2; exit 2 ;;
esac

# Exactly these files, relative to the prefix.
expected=(bin/tokenbench share/doc/tokenbench/copyright)
# The guides and their pictures (Help > User Guide opens them from here).
for doc in "$(dirname "$0")"/../../docs/*.md "$(dirname "$0")"/../../docs/images/*.png; do
  rel=${doc#"$(dirname "$0")"/../../docs/}
  expected+=("share/doc/tokenbench/$rel")
done
for preset in "$(dirname "$0")"/../../resources/presets/*.json; do
  expected+=("share/tokenbench/presets/$(basename "$preset")")
done
if [[ $gui == 1 ]]; then
  expected+=("share/applications/$app_id.desktop" "share/metainfo/$app_id.metainfo.xml"
             "share/icons/hicolor/scalable/apps/$app_id.svg"
             "share/icons/hicolor/256x256/apps/$app_id.png")
fi
[[ $trainer == 1 ]] && expected+=(libexec/tokenbench/tokenbench-trainer)
diff <(printf '%s\n' "${expected[@]}" | sort) <(cd "$prefix" && find . -type f | sed 's|^\./||' | sort) \
  >"$scratch/files.diff" || { fail "installed files differ from the layout (< expected, > installed):"; cat "$scratch/files.diff"; }

for exe in bin/tokenbench libexec/tokenbench/tokenbench-trainer; do
  [[ -e $prefix/$exe ]] || continue
  [[ -x $prefix/$exe ]] || fail "$exe is not executable"
  missing=$(ldd "$prefix/$exe" | grep 'not found' || true)
  [[ -z $missing ]] || fail "$exe: libraries not found: $missing"
done

# The front end finds the trainer in the installed layout (no variable, no option).
out=$(env -u TOKENBENCH_TRAINER "$prefix/bin/tokenbench" --version 2>&1) || fail "tokenbench --version exited $?"
echo "$out" | sed 's/^/  tokenbench --version: /'
[[ $out == *"tokenbench $version"* ]] || fail "tokenbench --version does not print $version"
if [[ $trainer == 1 ]]; then
  [[ $out == *"trainer: $prefix/libexec/tokenbench/tokenbench-trainer"* ]] ||
    fail "tokenbench --version does not name $prefix/libexec/tokenbench/tokenbench-trainer"
  tout=$("$prefix/libexec/tokenbench/tokenbench-trainer" --version 2>&1) || fail "tokenbench-trainer --version exited $?"
  echo "$tout" | sed 's/^/  tokenbench-trainer --version: /'
  [[ $(head -n1 <<<"$tout") == "tokenbench-trainer $version" ]] || fail "tokenbench-trainer --version: unexpected first line"
else
  [[ $out == *"trainer: not found"* ]] || fail "tokenbench --version should say the trainer is not found"
fi

if [[ $gui == 1 ]]; then
  desktop=$prefix/share/applications/$app_id.desktop
  grep -qx "Icon=$app_id" "$desktop" || fail "$desktop: Icon is not $app_id"
  grep -qx "Exec=tokenbench" "$desktop" || fail "$desktop: Exec is not tokenbench"
  grep -q "<id>$app_id</id>" "$prefix/share/metainfo/$app_id.metainfo.xml" || fail "metainfo id is not $app_id"
  grep -q "<launchable type=\"desktop-id\">$app_id.desktop</launchable>" \
    "$prefix/share/metainfo/$app_id.metainfo.xml" || fail "metainfo does not launch $app_id.desktop"
  png=$prefix/share/icons/hicolor/256x256/apps/$app_id.png
  read -r w3 w2 w1 w0 h3 h2 h1 h0 < <(od -An -tu1 -j16 -N8 "$png")
  size="$(( (w3 << 24) | (w2 << 16) | (w1 << 8) | w0 ))x$(( (h3 << 24) | (h2 << 16) | (h1 << 8) | h0 ))"
  [[ $size == 256x256 ]] || fail "$png is $size, not 256x256"
  if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate "$desktop" || fail "desktop-file-validate $desktop"
  fi
  if command -v appstreamcli >/dev/null; then
    appstreamcli validate --no-net "$prefix/share/metainfo/$app_id.metainfo.xml" >"$scratch/as.log" 2>&1 ||
      { cat "$scratch/as.log"; fail "appstreamcli validate"; }
  fi
fi

[[ $failed -eq 0 ]] || exit 1
echo "ok: $mode tree under $prefix has the ${#expected[@]} expected files"
