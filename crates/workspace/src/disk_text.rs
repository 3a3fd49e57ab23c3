//! Names and paths from the disk as the text of cocode's paths (see
//! [`cocode_core::disk_name`]), for every listing of the workspace.

use std::path::Path;

/// A name from the disk as the text of cocode's paths (see
/// [`cocode_core::disk_name`]); `None` when it has none.
pub(crate) fn name_text(name: &std::ffi::OsStr) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt as _;
        cocode_core::disk_name::to_text(name.as_bytes()).map(std::borrow::Cow::into_owned)
    }
    #[cfg(not(unix))]
    {
        name.to_str().map(ToOwned::to_owned)
    }
}

/// A relative path from the disk as the text of cocode's paths, its
/// segments joined by `/`; `None` when a name has none.
pub(crate) fn text_of(rel: &Path) -> Option<String> {
    let mut out = String::new();
    for (n, part) in rel.components().enumerate() {
        if n > 0 {
            out.push('/');
        }
        out.push_str(&name_text(part.as_os_str())?);
    }
    Some(out)
}
