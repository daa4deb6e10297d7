#!/usr/bin/env bash
# vendor-uplot.sh — refreshes the charting library the dashboard compiles into the t2exp binary.
#
# The files it writes (framework/dashboard/web/vendor/) are committed, so building t2exp needs no
# node and no network; run this only to move to another uPlot version. It fetches the pinned
# tarball from the npm registry with `npm pack`, refuses it unless its sha256 is the pinned one
# (the registry's own integrity field is checked by npm too), and copies the minified build, its
# stylesheet and the MIT licence.
#
# To upgrade: set UPLOT_VERSION, run with UPLOT_SHA256=any to print the new hash, review the
# upstream changes, then pin that hash here.
set -euo pipefail

UPLOT_VERSION="${UPLOT_VERSION:-1.6.32}"
PINNED_SHA256="4b8a8191e425658e3ea8c8c1314b0fc679c861ee3a1af2b20c7b16ba50b5133d"
want="${UPLOT_SHA256:-$PINNED_SHA256}"

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/framework/dashboard/web/vendor"
command -v npm >/dev/null || { echo "vendor-uplot.sh: npm is needed to fetch uPlot (apt-get install npm)" >&2; exit 2; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "uplot@$UPLOT_VERSION" >/dev/null)
tgz="$tmp/uplot-$UPLOT_VERSION.tgz"
[ -f "$tgz" ] || { echo "vendor-uplot.sh: npm pack did not produce $tgz" >&2; exit 3; }
got="$(sha256sum "$tgz" | cut -d' ' -f1)"
if [ "$want" = any ]; then
  echo "uplot $UPLOT_VERSION sha256 $got"
elif [ "$got" != "$want" ]; then
  echo "vendor-uplot.sh: uplot-$UPLOT_VERSION.tgz has sha256 $got, pinned $want: refusing it" >&2
  exit 3
fi

tar -xzf "$tgz" -C "$tmp"
mkdir -p "$dest"
install -m 0644 "$tmp/package/dist/uPlot.iife.min.js" "$dest/uPlot.iife.min.js"
install -m 0644 "$tmp/package/dist/uPlot.min.css" "$dest/uPlot.min.css"
install -m 0644 "$tmp/package/LICENSE" "$dest/uPlot.LICENSE"
printf 'uPlot %s from https://registry.npmjs.org/uplot/-/uplot-%s.tgz\nsha256 %s\nlicence: MIT (uPlot.LICENSE)\nrefresh: scripts/vendor-uplot.sh\n' \
  "$UPLOT_VERSION" "$UPLOT_VERSION" "$got" > "$dest/VERSION"
echo "vendored uPlot $UPLOT_VERSION into ${dest#"$root"/}"
