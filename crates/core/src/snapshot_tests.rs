use super::*;
use crate::path::{CaseSensitivity, NormalizeOptions, PathStyle, UnicodeSensitivity, normalize};
use pretty_assertions::assert_eq;

fn path(p: &str) -> NormalizedPath {
    normalize(
        p,
        NormalizeOptions {
            case: CaseSensitivity::Sensitive,
            unicode: UnicodeSensitivity::Sensitive,
            style: PathStyle::Posix,
        },
    )
    .unwrap()
}

fn parts(prev: Option<&str>, base: Option<&[u8]>, result: Option<&[u8]>) -> EditSnapshotParts {
    EditSnapshotParts {
        snapshot_id: SnapshotId::new("s1").unwrap(),
        task_id: TaskId::new("t1").unwrap(),
        seq: Seq(3),
        attempt_no: AttemptNo(1),
        path: path("src/b.rs"),
        previous_path: prev.map(path),
        base: base.map(ContentHash::of),
        result: result.map(ContentHash::of),
        unkept: Unkept::NONE,
        forms: Forms::NONE,
        origin: SnapshotOrigin::Gate,
        ts: Timestamp(1_700_000_000_000),
    }
}

#[test]
fn content_hash_text_form_round_trips() {
    let h = ContentHash::of(b"");
    assert_eq!(
        h.to_string(),
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(h.to_string().parse::<ContentHash>(), Ok(h));
    for bad in [
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "sha256:E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",
        "sha256:e3b0",
        "sha1:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "sha256:g3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ] {
        assert_eq!(bad.parse::<ContentHash>(), Err(ContentHashError), "{bad}");
    }
}

#[test]
fn kind_is_derived_from_the_fields() {
    let kinds: Vec<_> = [
        parts(None, None, Some(b"x")),
        parts(None, Some(b"x"), Some(b"y")),
        parts(None, Some(b"x"), None),
        parts(Some("src/a.rs"), Some(b"x"), Some(b"x")),
        parts(None, Some(b"x"), Some(b"")),
    ]
    .into_iter()
    .map(|p| EditSnapshot::new(p).unwrap().kind())
    .collect();
    assert_eq!(
        kinds,
        [
            SnapshotKind::Create,
            SnapshotKind::Modify,
            SnapshotKind::Delete,
            SnapshotKind::Rename,
            SnapshotKind::Modify,
        ]
    );
}

#[test]
fn impossible_snapshots_are_rejected() {
    let cases = [
        (parts(None, None, None), SnapshotInvalid::AbsentToAbsent),
        (
            parts(Some("src/a.rs"), None, None),
            SnapshotInvalid::AbsentToAbsent,
        ),
        (
            parts(Some("src/a.rs"), Some(b"x"), Some(b"y")),
            SnapshotInvalid::RenameChangesContent,
        ),
        (
            parts(Some("src/a.rs"), None, Some(b"y")),
            SnapshotInvalid::RenameChangesContent,
        ),
        (
            parts(Some("src/a.rs"), Some(b"x"), None),
            SnapshotInvalid::RenameChangesContent,
        ),
        (
            parts(Some("src/b.rs"), Some(b"x"), Some(b"x")),
            SnapshotInvalid::RenameOntoItself,
        ),
        (
            parts(None, Some(b"x"), Some(b"x")),
            SnapshotInvalid::Unchanged,
        ),
    ];
    for (p, expected) in cases {
        assert_eq!(EditSnapshot::new(p), Err(expected));
    }
}

#[test]
fn absent_differs_from_the_empty_file() {
    let create_empty = EditSnapshot::new(parts(None, None, Some(b""))).unwrap();
    assert_eq!(create_empty.kind(), SnapshotKind::Create);
    assert_eq!(create_empty.result(), Some(ContentHash::of(b"")));
    assert_ne!(create_empty.base(), create_empty.result());
}

#[test]
fn rename_projects_to_two_transitions() {
    let s = EditSnapshot::new(parts(Some("src/a.rs"), Some(b"x"), Some(b"x"))).unwrap();
    let h = Some(ContentHash::of(b"x"));
    assert_eq!(
        s.transitions(),
        vec![
            PathTransition {
                path: path("src/a.rs"),
                before: h,
                after: None
            },
            PathTransition {
                path: path("src/b.rs"),
                before: None,
                after: h
            },
        ]
    );
    let m = EditSnapshot::new(parts(None, Some(b"x"), Some(b"y"))).unwrap();
    assert_eq!(
        m.transitions(),
        vec![PathTransition {
            path: path("src/b.rs"),
            before: Some(ContentHash::of(b"x")),
            after: Some(ContentHash::of(b"y")),
        }]
    );
}

#[test]
fn wire_form_is_stable_and_validated() {
    let s = EditSnapshot::new(parts(None, None, Some(b""))).unwrap();
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "snapshot_id": "s1", "task_id": "t1", "seq": 3, "attempt_no": 1,
            "path": "src/b.rs", "base": null,
            "result": "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "origin": "gate", "ts": 1_700_000_000_000_i64
        })
    );
    let back: EditSnapshot = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(back, s);

    let mut absent_both = json.clone();
    absent_both["result"] = serde_json::Value::Null;
    assert!(serde_json::from_value::<EditSnapshot>(absent_both).is_err());

    let mut missing_base = json.clone();
    missing_base.as_object_mut().unwrap().remove("base");
    assert!(
        serde_json::from_value::<EditSnapshot>(missing_base).is_err(),
        "an omitted base is not the same as an absent one"
    );

    let mut traversal = json;
    traversal["path"] = "../outside".into();
    assert!(serde_json::from_value::<EditSnapshot>(traversal).is_err());
}

#[test]
fn only_present_content_is_marked_too_large_to_keep_and_kept_hashes_leave_it_out() {
    let mut created = parts(None, None, Some(b"big"));
    created.unkept = Unkept {
        base: true,
        result: false,
    };
    assert_eq!(
        EditSnapshot::new(created.clone()),
        Err(SnapshotInvalid::UnkeptAbsent)
    );
    created.unkept = Unkept {
        base: false,
        result: true,
    };
    let s = EditSnapshot::new(created).unwrap();
    assert_eq!(s.kept_hashes().collect::<Vec<_>>(), vec![]);
    let mut modified = parts(None, Some(b"small"), Some(b"big"));
    modified.unkept.result = true;
    let s = EditSnapshot::new(modified).unwrap();
    assert_eq!(
        s.kept_hashes().collect::<Vec<_>>(),
        vec![ContentHash::of(b"small")]
    );
    // On the wire only when set; a record without it reads as all kept.
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["unkept"], serde_json::json!({"result": true}));
    let plain = EditSnapshot::new(parts(None, Some(b"a"), Some(b"b"))).unwrap();
    let json = serde_json::to_value(&plain).unwrap();
    assert!(json.get("unkept").is_none(), "{json}");
    let back: EditSnapshot = serde_json::from_value(json).unwrap();
    assert_eq!(back.unkept(), Unkept::NONE);
}
