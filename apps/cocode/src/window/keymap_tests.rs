use super::*;
use pretty_assertions::assert_eq;

#[test]
fn every_command_has_its_own_id_and_words() {
    let all = Action::all();
    let mut ids: Vec<&str> = all.iter().map(|a| a.id()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all.len(), "two commands share an id");
    for action in &all {
        assert_eq!(Action::from_id(action.id()), Some(*action));
        assert!(!action.title().is_empty());
    }
    assert_eq!(Action::from_id("view.nothing"), None);
}

#[test]
fn the_defaults_follow_each_systems_convention() {
    let linux = Keymap::defaults(Os::Linux);
    assert_eq!(linux.label(Action::CommandPalette), "Ctrl+Shift+P");
    assert_eq!(linux.label(Action::GoToFile), "Ctrl+P");
    assert_eq!(linux.label(Action::FocusTerminal), "Ctrl+`");
    assert_eq!(linux.label(Action::Editor(EditorAction::Replace)), "Ctrl+H");
    let mac = Keymap::defaults(Os::MacOs);
    assert_eq!(mac.label(Action::CommandPalette), "⇧⌘P");
    // The terminal is Control+` on macOS too; ⌘H would hide the app.
    assert_eq!(mac.label(Action::FocusTerminal), "⌃`");
    assert_eq!(mac.label(Action::Editor(EditorAction::Replace)), "⌥⌘F");
    assert_eq!(mac.label(Action::Editor(EditorAction::GoToLine)), "⌃G");
    // No key means two commands.
    for map in [&linux, &mac] {
        let mut chords: Vec<Chord> = map.bindings.iter().map(|(c, _)| *c).collect();
        let n = chords.len();
        chords.sort_by_key(|c| format!("{c:?}"));
        chords.dedup();
        assert_eq!(chords.len(), n);
    }
}

#[test]
fn a_key_matches_exactly_its_modifiers() {
    let map = Keymap::defaults(Os::Linux);
    let ctrl_shift = Modifiers::CTRL | Modifiers::SHIFT;
    assert_eq!(map.find(Key::P, ctrl_shift), Some(Action::CommandPalette));
    assert_eq!(map.find(Key::P, Modifiers::CTRL), Some(Action::GoToFile));
    // egui's "command" stands for Ctrl here.
    assert_eq!(map.find(Key::P, Modifiers::COMMAND), Some(Action::GoToFile));
    assert_eq!(map.find(Key::P, Modifiers::NONE), None);
    assert_eq!(map.find(Key::P, Modifiers::CTRL | Modifiers::ALT), None);
    assert_eq!(
        map.editor_action(Key::Slash, Modifiers::CTRL),
        Some(EditorAction::ToggleComment)
    );
    assert_eq!(map.editor_action(Key::P, Modifiers::CTRL), None);
    let mac = Keymap::defaults(Os::MacOs);
    assert_eq!(
        mac.find(Key::Backtick, Modifiers::CTRL),
        Some(Action::FocusTerminal)
    );
    assert_eq!(
        mac.find(Key::Backtick, Modifiers::MAC_CMD | Modifiers::COMMAND),
        None
    );
    assert_eq!(
        mac.find(Key::S, Modifiers::MAC_CMD | Modifiers::COMMAND),
        Some(Action::Save)
    );
}

#[test]
fn keys_are_read_as_vs_code_writes_them() {
    let linux = |t: &str| Chord::parse(t, Os::Linux).map(|c| c.label(Os::Linux));
    assert_eq!(linux("ctrl+shift+p"), Ok("Ctrl+Shift+P".to_owned()));
    assert_eq!(linux("Ctrl+Alt+Up"), Ok("Ctrl+Alt+Up".to_owned()));
    assert_eq!(linux("f3"), Ok("F3".to_owned()));
    assert_eq!(linux("ctrl+`"), Ok("Ctrl+`".to_owned()));
    assert_eq!(linux("ctrl+/"), Ok("Ctrl+/".to_owned()));
    assert_eq!(linux("ctrl+pagedown"), Ok("Ctrl+PageDown".to_owned()));
    assert_eq!(linux("ctrl++"), Ok("Ctrl++".to_owned()));
    assert_eq!(
        linux("cmd+s"),
        Err("“cmd” in “cmd+s” is the macOS Command key; on this system write “ctrl”".to_owned())
    );
    assert_eq!(
        linux("ctrl+k ctrl+s"),
        Err(
            "“ctrl+k ctrl+s” is a sequence of keys; cocode binds one key with its modifiers"
                .to_owned()
        )
    );
    assert_eq!(
        linux("hyper+x"),
        Err("“hyper” in “hyper+x” is not a modifier".to_owned())
    );
    assert_eq!(
        linux("ctrl+nokey"),
        Err("“nokey” in “ctrl+nokey” is not a key cocode knows".to_owned())
    );
    let mac = Chord::parse("cmd+shift+p", Os::MacOs).unwrap();
    assert_eq!(mac.label(Os::MacOs), "⇧⌘P");
    let mac_ctrl = Chord::parse("ctrl+g", Os::MacOs).unwrap();
    assert_eq!(mac_ctrl.label(Os::MacOs), "⌃G");
}

#[test]
fn a_persons_bindings_come_first_and_take_their_key() {
    let text = r#"[
        { "key": "ctrl+k", "command": "view.commandPalette" },
        { "key": "ctrl+p", "command": "view.trace" },
        { "key": "ctrl+shift+e", "command": "-view.explorer" },
        { "command": "-file.quit" }
    ]"#;
    let map = Keymap::with_overrides(Os::Linux, text);
    assert_eq!(map.problems, Vec::<String>::new());
    assert_eq!(map.label(Action::CommandPalette), "Ctrl+K");
    // The default still works too.
    assert_eq!(
        map.find(Key::P, Modifiers::CTRL | Modifiers::SHIFT),
        Some(Action::CommandPalette)
    );
    // Ctrl+P now means the person's command only.
    assert_eq!(
        map.find(Key::P, Modifiers::CTRL),
        Some(Action::Show(PanelId::Trace))
    );
    assert_eq!(map.label(Action::GoToFile), "");
    assert_eq!(map.label(Action::Show(PanelId::Explorer)), "");
    assert_eq!(map.label(Action::Quit), "");
}

#[test]
fn what_cannot_be_used_is_said_and_the_rest_applies() {
    let text = r#"[
        { "key": "ctrl+k", "command": "view.nothing" },
        { "key": "ctrl+j", "command": "view.trace", "when": "editorFocus" },
        { "key": "cmd+j", "command": "view.trace" },
        { "command": "view.trace" },
        { "key": "ctrl+u", "command": "view.problems" }
    ]"#;
    let map = Keymap::with_overrides(Os::Linux, text);
    assert_eq!(map.problems.len(), 4, "{:#?}", map.problems);
    assert_eq!(
        map.problems[0],
        "keybindings.json, entry 1: “view.nothing” is not a command"
    );
    assert!(map.problems[1].starts_with("keybindings.json, entry 2: unknown field `when`"));
    assert_eq!(
        map.problems[3],
        "keybindings.json, entry 4: a binding needs a “key”"
    );
    assert_eq!(map.label(Action::Show(PanelId::Problems)), "Ctrl+U");
    let broken = Keymap::with_overrides(Os::Linux, "{ not json");
    assert_eq!(broken.problems.len(), 1);
    assert!(broken.problems[0].starts_with("keybindings.json is not JSON"));
    assert_eq!(broken.bindings, Keymap::defaults(Os::Linux).bindings);
    let object = Keymap::with_overrides(Os::Linux, "{}");
    assert_eq!(
        object.problems,
        vec!["keybindings.json is not a list of bindings; the defaults apply".to_owned()]
    );
}

#[test]
fn a_missing_file_is_the_defaults_and_an_unreadable_one_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keybindings.json");
    let missing = Keymap::load(Os::Linux, Some(&file));
    assert_eq!(missing.bindings, Keymap::defaults(Os::Linux).bindings);
    assert_eq!(missing.problems, Vec::<String>::new());
    assert_eq!(missing.file, Some(file));
    // A folder where the file should be cannot be read as one.
    let unreadable = Keymap::load(Os::Linux, Some(dir.path()));
    assert_eq!(unreadable.problems.len(), 1);
    assert!(unreadable.problems[0].ends_with("; the defaults apply"));
    assert_eq!(unreadable.bindings, Keymap::defaults(Os::Linux).bindings);
}
