#!/bin/sh
# Removes what install.sh installed, by its list: the files first, then the
# folders it made, deepest first, each only if it is empty.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
list="$here/installed"
if [ ! -f "$list" ]; then
    echo "uninstall: no list of installed files in $here" >&2
    exit 1
fi
kept=$(mktemp)
cp "$list" "$kept"
grep '^file ' "$kept" | cut -c6- | while IFS= read -r f; do
    rm -f "$f"
done
for cache in "$(dirname "$here")/applications/mimeinfo.cache" \
             "$(dirname "$here")/icons/hicolor/icon-theme.cache"; do
    # Caches the desktop tools wrote for these folders go with them.
    if grep -q "^dir $(dirname "$cache")$" "$kept"; then rm -f "$cache"; fi
done
grep '^dir ' "$kept" | cut -c5- | sort -r | while IFS= read -r d; do
    rmdir "$d" 2>/dev/null || true
done
rm -f "$kept"
echo "cocode is removed."
