//! Windows resources of `cocode.exe`: the application icon (Explorer, the
//! taskbar, the installer) and the version information Explorer shows in
//! the file's properties. Compiled with `windres` for the GNU target and
//! `rc.exe` for MSVC (the `embed-resource` crate); other targets need none.
#![expect(
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "a build script writes its output folder and stops the build with the reason"
)]

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("windows") {
        return;
    }
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let icon = manifest.join("../../assets/icon/cocode.ico");
    println!("cargo:rerun-if-changed={}", icon.display());
    let version = std::env::var("CARGO_PKG_VERSION").expect("set by cargo");
    let numbers: Vec<u16> = version
        .split(['.', '-', '+'])
        .take(3)
        .map(|part| part.parse().unwrap_or(0))
        .collect();
    let (major, minor, patch) = (numbers[0], numbers[1], numbers[2]);
    // Resource compilers take forward slashes; a backslash would need escaping.
    let icon = icon.display().to_string().replace('\\', "/");
    let rc = format!(
        r#"1 ICON "{icon}"
1 VERSIONINFO
FILEVERSION {major},{minor},{patch},0
PRODUCTVERSION {major},{minor},{patch},0
FILEOS 0x40004
FILETYPE 0x1
BEGIN
  BLOCK "StringFileInfo"
  BEGIN
    BLOCK "040904B0"
    BEGIN
      VALUE "CompanyName", "cocode"
      VALUE "FileDescription", "cocode - Agentic Development Environment"
      VALUE "FileVersion", "{version}"
      VALUE "InternalName", "cocode"
      VALUE "OriginalFilename", "cocode.exe"
      VALUE "ProductName", "cocode"
      VALUE "ProductVersion", "{version}"
    END
  END
  BLOCK "VarFileInfo"
  BEGIN
    VALUE "Translation", 0x409, 1200
  END
END
"#
    );
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo")).join("cocode.rc");
    std::fs::write(&out, rc).expect("writing the resource script");
    embed_resource::compile_for(&out, ["cocode"], embed_resource::NONE)
        .manifest_optional()
        .expect("compiling the Windows resources");
}
