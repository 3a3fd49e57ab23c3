//! The gate's error constructors: a refusal with its code, a disk or store
//! failure mapped to a stable code, and an internal failure.

use std::io;

use cocode_core::error::WorkspaceErrorCode;
use cocode_core::gate::{GateError, StoreError};
use cocode_core::path::NormalizedPath;

pub(super) fn internal(operation: &'static str, path: &str, message: &str) -> GateError {
    GateError {
        code: WorkspaceErrorCode::PathNotWritable,
        operation,
        path: path.to_owned(),
        message: message.to_owned(),
        io_kind: None,
    }
}

/// The disk failed under the history or a sync: retryable.
pub(super) fn io_failed(
    operation: &'static str,
    message: &str,
    io_kind: Option<io::ErrorKind>,
) -> GateError {
    GateError {
        code: WorkspaceErrorCode::IoFailed,
        operation,
        path: String::new(),
        message: message.to_owned(),
        io_kind,
    }
}

pub(super) fn refuse(
    code: WorkspaceErrorCode,
    operation: &'static str,
    path: &NormalizedPath,
    message: &str,
) -> GateError {
    GateError {
        code,
        operation,
        path: path.as_str().to_owned(),
        message: message.to_owned(),
        io_kind: None,
    }
}

pub(super) fn store_failed(operation: &'static str, e: &StoreError) -> GateError {
    let kind = match e {
        StoreError::Io { kind, .. } => *kind,
        _ => None,
    };
    io_failed(operation, &format!("history store failed: {e}"), kind)
}

/// Maps a disk error of an operation on `path` to a stable code.
pub(super) fn disk_failed(
    operation: &'static str,
    path: &NormalizedPath,
    e: &io::Error,
) -> GateError {
    let code = match e.kind() {
        io::ErrorKind::NotFound => WorkspaceErrorCode::FileNotFound,
        io::ErrorKind::AlreadyExists => WorkspaceErrorCode::FileConflict,
        // The path itself is the problem: a link or a non-folder on the
        // way, no permission, a read-only volume.
        io::ErrorKind::InvalidInput
        | io::ErrorKind::PermissionDenied
        | io::ErrorKind::ReadOnlyFilesystem => WorkspaceErrorCode::PathNotWritable,
        // The disk failed (full, an I/O error, a failed sync): the same
        // call may work later.
        _ => WorkspaceErrorCode::IoFailed,
    };
    GateError {
        io_kind: Some(e.kind()),
        ..refuse(code, operation, path, &e.to_string())
    }
}

#[cfg(test)]
mod io_codes {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn disk_errors_keep_their_kind_and_only_the_disk_failing_is_retryable() {
        use WorkspaceErrorCode as C;
        use io::ErrorKind as K;
        let path = NormalizedPath::try_from("a.txt".to_owned()).unwrap();
        let code = |kind: io::ErrorKind| {
            let e = disk_failed("write", &path, &io::Error::from(kind));
            (e.code, e.code.retryable(), e.io_kind)
        };
        assert_eq!(
            code(K::NotFound),
            (C::FileNotFound, false, Some(K::NotFound))
        );
        assert_eq!(
            code(K::AlreadyExists),
            (C::FileConflict, false, Some(K::AlreadyExists))
        );
        for kind in [K::InvalidInput, K::PermissionDenied, K::ReadOnlyFilesystem] {
            assert_eq!(code(kind), (C::PathNotWritable, false, Some(kind)));
        }
        for kind in [K::StorageFull, K::Other, K::Interrupted] {
            assert_eq!(code(kind), (C::IoFailed, true, Some(kind)));
        }
        let store = store_failed(
            "append",
            &StoreError::Io {
                message: "fsync failed".into(),
                kind: Some(K::StorageFull),
            },
        );
        assert_eq!(
            (store.code, store.code.retryable(), store.io_kind),
            (C::IoFailed, true, Some(K::StorageFull))
        );
    }
}
