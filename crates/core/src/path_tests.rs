use super::*;
use pretty_assertions::assert_eq;
use proptest::prelude::*;

const POSIX: NormalizeOptions = NormalizeOptions {
    case: CaseSensitivity::Sensitive,
    unicode: UnicodeSensitivity::Sensitive,
    style: PathStyle::Posix,
};
const POSIX_NFC: NormalizeOptions = NormalizeOptions {
    case: CaseSensitivity::Sensitive,
    unicode: UnicodeSensitivity::Insensitive,
    style: PathStyle::Posix,
};
const POSIX_FOLD: NormalizeOptions = NormalizeOptions {
    case: CaseSensitivity::Insensitive,
    unicode: UnicodeSensitivity::Insensitive,
    style: PathStyle::Posix,
};
const WINDOWS: NormalizeOptions = NormalizeOptions {
    case: CaseSensitivity::Insensitive,
    unicode: UnicodeSensitivity::Sensitive,
    style: PathStyle::Windows,
};

fn ok(rel: &str, options: NormalizeOptions) -> String {
    normalize(rel, options).map(String::from).unwrap()
}

#[test]
fn separators_dots_and_empty_segments_fold() {
    assert_eq!(ok("src/main.rs", POSIX), "src/main.rs");
    assert_eq!(ok("src\\lib\\mod.rs", POSIX), "src/lib/mod.rs");
    assert_eq!(ok("./src//./a.rs/", POSIX), "src/a.rs");
    assert_eq!(ok("a/./b", POSIX), "a/b");
}

#[test]
fn hostile_inputs_are_refused_with_a_reason() {
    assert_eq!(normalize("", POSIX), Err(PathInvalid::Empty));
    assert_eq!(normalize(".", POSIX), Err(PathInvalid::Empty));
    assert_eq!(normalize("./", POSIX), Err(PathInvalid::Empty));
    assert_eq!(normalize("/etc/passwd", POSIX), Err(PathInvalid::Absolute));
    assert_eq!(
        normalize("\\\\server\\share\\x", POSIX),
        Err(PathInvalid::Absolute)
    );
    assert_eq!(normalize("C:\\Windows", POSIX), Err(PathInvalid::Absolute));
    assert_eq!(normalize("c:x", POSIX), Err(PathInvalid::Absolute));
    assert_eq!(
        normalize("a/../../b", POSIX),
        Err(PathInvalid::ParentSegment)
    );
    assert_eq!(normalize("..", POSIX), Err(PathInvalid::ParentSegment));
    assert_eq!(
        normalize("a\\..\\b", POSIX),
        Err(PathInvalid::ParentSegment)
    );
    assert_eq!(normalize("a\0b", POSIX), Err(PathInvalid::Nul));
    assert_eq!(normalize("a/\0", POSIX), Err(PathInvalid::Nul));
    // `é` spelled as the stand-ins of its two bytes would be a second name
    // of `é`; a stand-in for a byte that is not text is a name's own.
    assert_eq!(
        normalize("x/caf\u{10ffc3}\u{10ffa9}", POSIX),
        Err(PathInvalid::NotCanonicalBytes(r"caf\xc3\xa9".to_owned()))
    );
    assert_eq!(ok("x/caf\u{10ffe9}.txt", POSIX), "x/caf\u{10ffe9}.txt");
    assert_eq!(ok("a\u{10ff5c}b", POSIX), "a\u{10ff5c}b");
    assert_eq!(PathInvalid::Nul.code().as_str(), "WORKSPACE_PATH_INVALID");
}

#[test]
fn dots_inside_names_are_not_parent_segments() {
    assert_eq!(ok("a/..b/c..", POSIX), "a/..b/c..");
    assert_eq!(ok("...", POSIX), "...");
}

#[test]
fn unicode_is_composed_to_nfc_only_where_the_volume_folds_it() {
    // "한" as conjoining jamo (NFD) and "é" as e + combining acute.
    let nfd = "\u{1112}\u{1161}\u{11AB}/e\u{301}.txt";
    let nfc = "\u{D55C}/\u{E9}.txt";
    assert_eq!(ok(nfd, POSIX_NFC), nfc);
    assert_eq!(normalize(nfd, POSIX_NFC), normalize("한/é.txt", POSIX_NFC));
    // The folded path remembers the form it was given, for a new file.
    assert_eq!(normalize(nfd, POSIX_NFC).unwrap().spelled(), nfd);
    assert_eq!(ok(nfd, POSIX_FOLD), nfc);
    // Where NFC and NFD names are two files, they are two paths.
    assert_eq!(ok(nfd, POSIX), nfd);
    assert_eq!(ok(nfc, POSIX), nfc);
    assert_ne!(normalize(nfd, POSIX), normalize(nfc, POSIX));
    assert_ne!(
        normalize(nfd, POSIX).unwrap().key(),
        normalize(nfc, POSIX).unwrap().key()
    );
    // Case folding there keeps the form too.
    assert_eq!(ok("E\u{301}.TXT", WINDOWS), "e\u{301}.txt");
    // Both forms are accepted back from records as they are.
    for text in [nfd, nfc] {
        let back: NormalizedPath = serde_json::from_value(serde_json::json!(text)).unwrap();
        assert_eq!(back.as_str(), text);
    }
}

#[test]
fn case_folds_only_on_case_insensitive_volumes() {
    assert_eq!(ok("Src/Main.RS", POSIX), "Src/Main.RS");
    assert_eq!(ok("Src/Main.RS", POSIX_FOLD), "src/main.rs");
    assert_eq!(ok("ÉCOLE/Ä.txt", POSIX_FOLD), "école/ä.txt");
}

#[test]
fn a_folded_path_keeps_its_spelling_for_names_that_do_not_exist_yet() {
    let given = normalize("./Src//MyWidget.RS", POSIX_FOLD).unwrap();
    assert_eq!(given.as_str(), "src/mywidget.rs");
    assert_eq!(given.spelled(), "Src/MyWidget.RS");
    assert_eq!(
        given.spelled_segments().collect::<Vec<_>>(),
        ["Src", "MyWidget.RS"]
    );
    // One path whatever the spelling: equality, order, hash and key.
    let other = normalize("src/mywidget.rs", POSIX_FOLD).unwrap();
    assert_eq!(other.spelled(), "src/mywidget.rs");
    assert_eq!(given, other);
    assert_eq!(given.cmp(&other), std::cmp::Ordering::Equal);
    assert_eq!(given.key(), other.key());
    let set: std::collections::HashSet<_> = [given.clone(), other].into_iter().collect();
    assert_eq!(set.len(), 1);
    // Persisted as the folded form; read back, it has no other spelling.
    let json = serde_json::to_string(&given).unwrap();
    assert_eq!(json, "\"src/mywidget.rs\"");
    let back: NormalizedPath = serde_json::from_str(&json).unwrap();
    assert_eq!(back.spelled(), "src/mywidget.rs");
    // A case-sensitive volume has one spelling only.
    assert_eq!(normalize("Src/A.rs", POSIX).unwrap().spelled(), "Src/A.rs");
    // Windows names are checked as spelled (the device rule ignores case).
    assert!(matches!(
        normalize("src/Con.txt", WINDOWS),
        Err(PathInvalid::WindowsReservedName(name)) if name == "Con.txt"
    ));
}

#[test]
fn windows_rules_refuse_device_names_and_forbidden_characters() {
    for name in ["CON", "con.txt", "a/Nul", "com1.rs", "LPT9.log", "aux .txt"] {
        assert!(
            matches!(
                normalize(name, WINDOWS),
                Err(PathInvalid::WindowsReservedName(_))
            ),
            "{name}"
        );
    }
    for name in ["a<b", "ab:c", "x/y?", "q\"", "p|q", "star*", "tab\tname"] {
        assert!(
            matches!(
                normalize(name, WINDOWS),
                Err(PathInvalid::WindowsForbiddenChar(_))
            ),
            "{name}"
        );
    }
    assert_eq!(
        normalize("dir./x", WINDOWS),
        Err(PathInvalid::WindowsTrailingDotOrSpace("dir.".into()))
    );
    // The same names are legitimate files on POSIX volumes.
    assert_eq!(ok("src/aux.rs", POSIX), "src/aux.rs");
    assert_eq!(ok("console.rs", WINDOWS), "console.rs");
    assert_eq!(ok("com10.rs", WINDOWS), "com10.rs");
}

#[test]
fn cocode_dir_is_recognised_in_every_variant() {
    for name in [
        ".cocode/x",
        ".COCODE/config/workspace.json",
        ".CoCode",
        ".cocode",
    ] {
        assert!(ok(name, POSIX).starts_with('.'));
        assert!(normalize(name, POSIX).unwrap().is_in_cocode_dir(), "{name}");
    }
    // Fullwidth letters fold to ASCII under NFKC.
    assert!(
        normalize(".\u{FF43}ocode/x", POSIX)
            .unwrap()
            .is_in_cocode_dir()
    );
    for name in ["src/.cocode/x", ".cocode2/x", "cocode/x", "x.cocode"] {
        assert!(
            !normalize(name, POSIX).unwrap().is_in_cocode_dir(),
            "{name}"
        );
    }
}

#[test]
fn version_control_names_are_recognised_in_every_spelling() {
    // ASCII in any case, fullwidth letters (NFKC) and the Kelvin sign's
    // cousins: each folds to a metadata name.
    for name in [
        ".git",
        ".GIT",
        ".Hg",
        ".svn",
        ".JJ",
        ".bzr",
        ".\u{FF47}it",
        ".\u{FF28}\u{FF47}",
    ] {
        assert!(is_version_control_name(name), "{name}");
    }
    for name in [
        "git",
        ".git2",
        ".gi",
        "x.git",
        ".gits",
        ".\u{FF47}i",
        "",
        ".",
    ] {
        assert!(!is_version_control_name(name), "{name}");
    }
    assert!(
        normalize("a/.GIT/hooks/x", POSIX)
            .unwrap()
            .is_in_version_control_metadata()
    );
    assert!(
        !normalize("a/.github/x", POSIX)
            .unwrap()
            .is_in_version_control_metadata()
    );
}

#[test]
fn containment_is_by_whole_segments() {
    let dir = normalize("src/a", POSIX).unwrap();
    assert!(dir.contains(&normalize("src/a", POSIX).unwrap()));
    assert!(dir.contains(&normalize("src/a/b.rs", POSIX).unwrap()));
    assert!(!dir.contains(&normalize("src/ab.rs", POSIX).unwrap()));
    assert!(!dir.contains(&normalize("src", POSIX).unwrap()));
}

#[test]
fn path_key_is_sha256_of_the_normalized_text() {
    let key = path_key("src\\main.rs", POSIX).unwrap();
    // sha256("src/main.rs")
    assert_eq!(
        key.to_hex(),
        "42cb6807ad74b3e201c5a7ca98b911c5fa08380e942be6e4ac5807f8377f87fc"
    );
    assert_eq!(key, normalize("./src/main.rs", POSIX).unwrap().key());
    assert_ne!(key, normalize("src/Main.rs", POSIX).unwrap().key());
    assert_eq!(
        path_key("SRC/MAIN.RS", POSIX_FOLD).unwrap(),
        path_key("src/main.rs", POSIX).unwrap()
    );
}

#[test]
fn persisted_paths_must_already_be_normalized() {
    let good: NormalizedPath = serde_json::from_str("\"src/a.rs\"").unwrap();
    assert_eq!(good.as_str(), "src/a.rs");
    for bad in [
        "\"src//a.rs\"",
        "\"../a\"",
        "\"/abs\"",
        "\"a\\\\b\"",
        "\"\"",
    ] {
        assert!(
            serde_json::from_str::<NormalizedPath>(bad).is_err(),
            "{bad}"
        );
    }
}

proptest! {
    #[test]
    fn normalization_is_idempotent(rel in "[a-zA-Z0-9._/\\\\ -]{0,40}") {
        if let Ok(once) = normalize(&rel, POSIX_FOLD) {
            let twice = normalize(once.as_str(), POSIX_FOLD).unwrap();
            prop_assert_eq!(&once, &twice);
            prop_assert!(!once.as_str().starts_with('/'));
            prop_assert!(once.segments().all(|s| !s.is_empty() && s != "." && s != ".."));
        }
    }

    #[test]
    fn plain_ascii_paths_are_normalized_as_any_text_is(
        rel in "[a-zA-Z0-9._/\\\\:<> -]{0,40}",
        folds in any::<bool>(),
        windows in any::<bool>(),
    ) {
        let options = match (folds, windows) {
            (_, true) => WINDOWS,
            (true, false) => POSIX_FOLD,
            (false, false) => POSIX,
        };
        prop_assert_eq!(normalize(&rel, options), normalize_any(&rel, options));
    }

    #[test]
    fn normalization_never_panics(rel in "\\PC{0,64}") {
        let _ = normalize(&rel, WINDOWS);
    }
}
