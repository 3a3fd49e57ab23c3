//! The macOS app bundle: `cocode.app` with its `Info.plist` (bundle id,
//! version, icon, minimum system version, folders as its document type), the
//! program in `Contents/MacOS` and the icon in `Contents/Resources`. Built
//! by `cargo xtask dist` on a Mac (the release workflow's macOS runner),
//! which then wraps it in a disk image with `hdiutil`; the layout and the
//! property list are unit-tested everywhere.

use std::path::{Path, PathBuf};

use anyhow::Result;

/// The bundle identifier (reverse DNS, stable across versions).
pub const BUNDLE_ID: &str = "dev.cocode.app";

/// The oldest macOS the app supports (Big Sur: the first with Apple
/// silicon, and what the Rust targets and egui's renderer need).
pub const MINIMUM_MACOS: &str = "11.0";

/// The `Info.plist` of version `version`.
pub fn info_plist(version: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>CFBundleDevelopmentRegion</key>
	<string>en</string>
	<key>CFBundleDisplayName</key>
	<string>cocode</string>
	<key>CFBundleDocumentTypes</key>
	<array>
		<dict>
			<key>CFBundleTypeName</key>
			<string>Folder</string>
			<key>CFBundleTypeRole</key>
			<string>Editor</string>
			<key>LSHandlerRank</key>
			<string>Alternate</string>
			<key>LSItemContentTypes</key>
			<array>
				<string>public.folder</string>
			</array>
		</dict>
	</array>
	<key>CFBundleExecutable</key>
	<string>cocode</string>
	<key>CFBundleIconFile</key>
	<string>cocode.icns</string>
	<key>CFBundleIdentifier</key>
	<string>{BUNDLE_ID}</string>
	<key>CFBundleInfoDictionaryVersion</key>
	<string>6.0</string>
	<key>CFBundleName</key>
	<string>cocode</string>
	<key>CFBundlePackageType</key>
	<string>APPL</string>
	<key>CFBundleShortVersionString</key>
	<string>{version}</string>
	<key>CFBundleVersion</key>
	<string>{version}</string>
	<key>LSApplicationCategoryType</key>
	<string>public.app-category.developer-tools</string>
	<key>LSMinimumSystemVersion</key>
	<string>{MINIMUM_MACOS}</string>
	<key>NSHighResolutionCapable</key>
	<true/>
</dict>
</plist>
"#
    )
}

/// Lays out `out/cocode.app` around `binary` (an earlier one replaced);
/// its path.
pub fn lay_out(root: &Path, binary: &Path, out: &Path, version: &str) -> Result<PathBuf> {
    let app = out.join("cocode.app");
    if app.exists() {
        std::fs::remove_dir_all(&app)?;
    }
    let contents = app.join("Contents");
    std::fs::create_dir_all(contents.join("MacOS"))?;
    std::fs::create_dir_all(contents.join("Resources"))?;
    std::fs::write(contents.join("Info.plist"), info_plist(version))?;
    std::fs::copy(binary, contents.join("MacOS/cocode"))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(
            contents.join("MacOS/cocode"),
            std::fs::Permissions::from_mode(0o755),
        )?;
    }
    std::fs::copy(
        root.join("assets/icon/cocode.icns"),
        contents.join("Resources/cocode.icns"),
    )?;
    Ok(app)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_bundle_holds_the_plist_the_program_and_the_icon() {
        let root = crate::repo_root().unwrap();
        let work = tempfile::tempdir().unwrap();
        let fake = work.path().join("cocode");
        std::fs::write(&fake, "#!/bin/sh\n").unwrap();
        let app = lay_out(&root, &fake, work.path(), "1.2.3").unwrap();
        assert_eq!(
            crate::dist::tests::tree(&app),
            [
                "Contents",
                "Contents/Info.plist",
                "Contents/MacOS",
                "Contents/MacOS/cocode",
                "Contents/Resources",
                "Contents/Resources/cocode.icns",
            ]
        );
        assert_eq!(
            std::fs::read_to_string(app.join("Contents/Info.plist")).unwrap(),
            info_plist("1.2.3")
        );
        assert_eq!(
            std::fs::read(app.join("Contents/Resources/cocode.icns")).unwrap(),
            std::fs::read(root.join("assets/icon/cocode.icns")).unwrap()
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(app.join("Contents/MacOS/cocode"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o755);
        }
        // Laid out again, it replaces the earlier bundle.
        let again = lay_out(&root, &fake, work.path(), "1.2.4").unwrap();
        assert_eq!(
            std::fs::read_to_string(again.join("Contents/Info.plist")).unwrap(),
            info_plist("1.2.4")
        );
    }

    #[test]
    fn the_plist_names_the_bundle_its_version_icon_system_and_folders() {
        let plist = info_plist("0.9.1");
        // Every key is followed by its value; a flat reading of the pairs.
        let pairs: Vec<(String, String)> = key_values(&plist);
        for (key, value) in [
            ("CFBundleIdentifier", "dev.cocode.app"),
            ("CFBundleExecutable", "cocode"),
            ("CFBundleIconFile", "cocode.icns"),
            ("CFBundlePackageType", "APPL"),
            ("CFBundleShortVersionString", "0.9.1"),
            ("CFBundleVersion", "0.9.1"),
            ("LSMinimumSystemVersion", "11.0"),
            ("CFBundleTypeRole", "Editor"),
            ("NSHighResolutionCapable", "true"),
        ] {
            assert!(
                pairs.contains(&(key.to_owned(), value.to_owned())),
                "{key} = {value} in {pairs:?}"
            );
        }
        assert!(plist.contains("<string>public.folder</string>"));
        // Balanced: every opened element is closed.
        for tag in ["plist", "dict", "array"] {
            assert_eq!(
                plist.matches(&format!("<{tag}")).count(),
                plist.matches(&format!("</{tag}>")).count(),
                "{tag}"
            );
        }
    }

    /// (key, the value element's text or its tag name for `<true/>`).
    fn key_values(plist: &str) -> Vec<(String, String)> {
        let lines: Vec<&str> = plist.lines().map(str::trim).collect();
        lines
            .windows(2)
            .filter_map(|w| {
                let key = w[0].strip_prefix("<key>")?.strip_suffix("</key>")?;
                let value = w[1]
                    .strip_prefix("<string>")
                    .and_then(|v| v.strip_suffix("</string>"))
                    .map(str::to_owned)
                    .or_else(|| (w[1] == "<true/>").then(|| "true".to_owned()))?;
                Some((key.to_owned(), value))
            })
            .collect()
    }
}
