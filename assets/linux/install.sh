#!/bin/sh
# Installs cocode for this user into PREFIX (default: ~/.local): the
# program, its desktop entry (so menus and "Open with" on folders offer it)
# and its icons. Every file and folder it makes is listed, so
# share/cocode/uninstall.sh removes exactly those.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=${PREFIX:-"$HOME/.local"}
list=$(mktemp)
trap 'rm -f "$list"' EXIT

# Makes a folder (and its missing parents), noting each one it made.
make_dir() {
    if [ ! -d "$1" ]; then
        make_dir "$(dirname "$1")"
        mkdir "$1"
        echo "dir $1" >> "$list"
    fi
}

# Copies a file into place with a mode, noting it.
put() {
    make_dir "$(dirname "$3")"
    cp "$1" "$3.new"
    chmod "$2" "$3.new"
    mv -f "$3.new" "$3"
    echo "file $3" >> "$list"
}

put "$here/bin/cocode" 755 "$prefix/bin/cocode"
# The entry names the program by its full path: ~/.local/bin is not on
# every desktop session's PATH.
entry=$(mktemp)
sed -e "s|^Exec=cocode |Exec=$prefix/bin/cocode |" -e "s|^TryExec=cocode$|TryExec=$prefix/bin/cocode|" \
    "$here/share/applications/cocode.desktop" > "$entry"
put "$entry" 644 "$prefix/share/applications/cocode.desktop"
rm -f "$entry"
for icon in "$here"/share/icons/hicolor/*/apps/cocode.png; do
    size=$(basename "$(dirname "$(dirname "$icon")")")
    put "$icon" 644 "$prefix/share/icons/hicolor/$size/apps/cocode.png"
done
profile=$(mktemp)
sed -e "s|@COCODE_PATH@|$prefix/bin/cocode|" "$here/share/cocode/apparmor-cocode.in" > "$profile"
put "$profile" 644 "$prefix/share/cocode/apparmor-cocode"
rm -f "$profile"
put "$here/uninstall.sh" 755 "$prefix/share/cocode/uninstall.sh"
echo "file $prefix/share/cocode/installed" >> "$list"
make_dir "$prefix/share/cocode"
cp "$list" "$prefix/share/cocode/installed"

command -v update-desktop-database >/dev/null 2>&1 \
    && update-desktop-database "$prefix/share/applications" 2>/dev/null || true
command -v gtk-update-icon-cache >/dev/null 2>&1 \
    && gtk-update-icon-cache -q -t "$prefix/share/icons/hicolor" 2>/dev/null || true
echo "cocode is installed: $prefix/bin/cocode"
# Ubuntu 24.04 and later refuse unprivileged user namespaces to programs
# without an AppArmor profile allowing them. cocode runs each agent command
# in namespaces of its own; without them it runs commands with fewer
# protections (`cocode doctor` lists which). The package installs the
# profile itself; here an administrator does, once.
if [ "$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null)" = 1 ]; then
    echo "This system restricts user namespaces through AppArmor. For the full sandbox of"
    echo "agent commands, an administrator installs the profile made for this install:"
    echo "  sudo install -m 644 $prefix/share/cocode/apparmor-cocode /etc/apparmor.d/cocode"
    echo "  sudo apparmor_parser -r /etc/apparmor.d/cocode"
fi
echo "To remove it: $prefix/share/cocode/uninstall.sh"
