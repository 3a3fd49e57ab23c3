//! Settings → Providers and the built-in agent's providers in the window,
//! against a loopback server speaking the OpenAI-compatible wire format: an
//! address and a key set on the page, the model list fetched with the key,
//! a task run with the picked model that uses the key and shows it nowhere;
//! a refused key and a busy provider as typed failures with their way
//! out; and the key landing in a real Secret Service (a child process in
//! a private D-Bus session with gnome-keyring, as the vault's tests do).
//! Linux only: the agent's commands run confined, and the Secret Service
//! is Linux's.
#![expect(
    clippy::disallowed_methods,
    reason = "tests build fixture workspaces and read what landed on disk"
)]

use std::path::Path;
use std::sync::Arc;

use cocode_core::ProviderId;
use cocode_core::services::{CredentialVault, Secret};
use cocode_toolchain::vault::SessionVault;
use egui::Key;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;

use crate::window::app::CocodeApp;
use crate::window::command::{AgentCommand, Command, PanelId, WindowCommand};
use crate::window::loopback::{Answer, Loopback, anthropic_answer, openai_answer};
use crate::window::providers::{KeyState, ProviderSetup};
use crate::window::testing::{
    accept_completion, approve_and_accept, fixture_workspace, harness_keys, run_until, type_prompt,
};

use crate::window::testing::peers;

const KEY: &str = "sk-loopback-7f3a9c";

fn openai(h: &Harness<'_, CocodeApp>) -> Option<KeyState> {
    h.state().providers.row("openai").map(|r| r.key.clone())
}

/// Opens the Providers page from the Agent panel, points `OpenAI` at
/// `base_url` and stores `key`, as a person types them.
fn set_up_openai(h: &mut Harness<'static, CocodeApp>, base_url: &str, key: &str) {
    run_until(h, "the providers", |h| openai(h).is_some());
    set_up(h, ("openai", "OpenAI"), base_url, key);
}

/// Opens the Providers page from the Agent panel, points provider `id`
/// (`name` on the page) at `base_url` and stores `key`, as a person types
/// them.
fn set_up(
    h: &mut Harness<'static, CocodeApp>,
    (id, name): (&str, &str),
    base_url: &str,
    key: &str,
) {
    h.get_by_label("Providers…").click();
    let address = format!("{name} address");
    run_until(h, "the Providers page", |h| {
        h.query_by_label(&address).is_some()
    });
    let field = h.get_by_label(&address);
    field.click();
    h.run_steps(2);
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::A);
    h.get_by_label(&address).type_text(base_url);
    h.run_steps(2);
    h.key_press(Key::Enter);
    run_until(h, "the new address", |h| {
        h.state()
            .providers
            .notes
            .get(id)
            .is_some_and(|(t, ok)| *ok && t == &format!("new tasks use {base_url}"))
    });
    let key_field = format!("{name} API key");
    h.get_by_label(&key_field).click();
    h.run_steps(2);
    h.get_by_label(&key_field).type_text(key);
    h.run_steps(2);
    // The typed key is not shown (a password field).
    assert!(h.query_by_label_contains(key).is_none());
    h.key_press(Key::Enter);
    run_until(h, "the stored key", |h| {
        h.state()
            .providers
            .row(id)
            .is_some_and(|r| r.key != KeyState::Missing)
    });
    assert!(
        h.state().providers.key_drafts.is_empty(),
        "the typed key does not stay in the page"
    );
}

/// Picks a backend, and a model when given (else its default), in the
/// composer's pickers.
fn pick(h: &mut Harness<'static, CocodeApp>, backend: &str, model: Option<&str>) {
    let combo = |h: &Harness<'static, CocodeApp>, n: usize| {
        let pickers: Vec<_> = h
            .query_all_by_role(egui::accesskit::Role::ComboBox)
            .collect();
        assert!(pickers.len() > n, "the composer's pickers");
        pickers[n].click();
    };
    combo(h, 0);
    h.run_steps(2);
    h.get_by_label(backend).click();
    h.run_steps(2);
    let Some(model) = model else {
        assert_eq!(h.state().agent.backend, backend);
        return;
    };
    combo(h, 1);
    h.run_steps(2);
    if h.query_by_label(model).is_none() {
        // The click that closed the backend's list may not open this one.
        combo(h, 1);
        h.run_steps(2);
    }
    h.get_by_label(model).click();
    h.run_steps(2);
    assert_eq!(
        (
            h.state().agent.backend.as_str(),
            h.state().agent.model.as_deref()
        ),
        (backend, Some(model))
    );
}

/// Asks for "write out.txt", approves `cards` with Enter, accepts the
/// task, and finds `hi` written.
fn write_out_txt(h: &mut Harness<'static, CocodeApp>, root: &Path, cards: &[&str]) {
    type_prompt_and_run(h, "write out.txt");
    approve_and_accept(h, cards);
    assert_eq!(
        std::fs::read_to_string(root.join("out.txt"))
            .ok()
            .as_deref(),
        Some("hi\n")
    );
}

fn type_prompt_and_run(h: &mut Harness<'static, CocodeApp>, prompt: &str) {
    type_prompt(h, prompt);
    h.get_by_label("Run task").click();
}

/// Every file under `dir` that holds `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path)
                .is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

#[test]
fn a_key_and_an_address_set_on_the_page_serve_the_next_task_and_the_key_shows_nowhere() {
    let server = Loopback::start(vec![
        // Test connection.
        Answer::Json(
            200,
            r#"{"data":[{"id":"m-small"},{"id":"m-large"}]}"#.into(),
        ),
        // The task: a write, a command, then finish.
        openai_answer(
            "I will **write** `out.txt`.",
            &[(
                "c1",
                "workspace__writeFile",
                r#"{"path":"out.txt","content":"hi\n"}"#,
            )],
        ),
        openai_answer(
            "Now the environment.",
            &[("c2", "terminal__run", r#"{"argv":["env"]}"#)],
        ),
        openai_answer(
            "",
            &[("c3", "task__finish", r#"{"summary":"wrote out.txt"}"#)],
        ),
    ]);
    let (_dir, root) = fixture_workspace(&[("README.md", "# 안녕\n")]);
    let settings_dir = tempfile::tempdir().unwrap();
    let settings_file = settings_dir.path().join("providers.json");
    let store = Arc::new(SessionVault::default());
    let keys = ProviderSetup {
        store: Arc::clone(&store) as Arc<dyn CredentialVault>,
        session: Arc::new(SessionVault::default()),
        settings_file: Some(settings_file.clone()),
    };
    let mut h = harness_keys(Some(root.clone()), keys, |app| app.crash_notice = None);
    set_up_openai(&mut h, &server.base_url, KEY);
    assert_eq!(openai(&h), Some(KeyState::Stored));
    let openai_id = ProviderId::new("openai").unwrap();
    assert_eq!(
        store
            .get(&openai_id)
            .unwrap()
            .map(|s| s.expose().to_owned()),
        Some(KEY.to_owned())
    );
    h.get_by_label("Test the connection to OpenAI").click();
    run_until(&mut h, "the model list", |h| {
        h.state().providers.models.contains_key("openai")
    });
    assert_eq!(
        h.state().providers.models["openai"],
        Ok(vec!["m-small".to_owned(), "m-large".to_owned()])
    );
    h.get_by_label("connected: 2 model(s) offered");

    // The composer uses it: the provider, then a model from its list.
    h.state_mut().run(
        Command::Window(WindowCommand::ShowPanel(PanelId::Agent)),
        &egui::Context::default(),
    );
    h.run_steps(2);
    pick(&mut h, "openai", Some("m-large"));
    run_until(&mut h, "the model remembered", |_| {
        std::fs::read_to_string(&settings_file).is_ok_and(|s| s.contains("m-large"))
    });
    let settings = std::fs::read_to_string(&settings_file).unwrap();
    assert_eq!(
        settings,
        format!(
            "{{\n  \"providers\": {{\n    \"openai\": {{\n      \"base_url\": \"{}\",\n      \"model\": \"m-large\"\n    }}\n  }}\n}}\n",
            server.base_url
        )
    );
    write_out_txt(&mut h, &root, &["write a file", "run a command"]);
    let seen = server.seen();
    assert_eq!(
        server.requests(),
        vec![
            "GET /v1/models",
            "POST /v1/chat/completions",
            "POST /v1/chat/completions",
            "POST /v1/chat/completions",
        ]
    );
    for s in &seen {
        assert_eq!(s.headers["authorization"], format!("Bearer {KEY}"));
    }
    let first: serde_json::Value = serde_json::from_str(&seen[1].body).unwrap();
    assert_eq!(first["model"], "m-large");
    assert_eq!(
        first["stream_options"],
        serde_json::json!({"include_usage": true})
    );
    // Three requests, each counted; the panel adds them up.
    let spent = h.state().agent.current().transcript.tokens();
    assert_eq!((spent.input, spent.output), (3_600, 90));
    h.get_by_label("This task: 3,600 tokens in · 90 out");
    assert_transcript_without_key(&h, &[&root, settings_dir.path()]);
}

/// The transcript shows the agent's Markdown, the call, its diff and the
/// command's output; the key is nowhere in it, in the task's records, in
/// the settings, or in the command's environment.
fn assert_transcript_without_key(h: &Harness<'static, CocodeApp>, dirs: &[&Path]) {
    let transcript = h.state().agent.current().transcript.text();
    assert!(
        transcript.contains("  I will **write** `out.txt`."),
        "{transcript}"
    );
    assert!(transcript.contains("    +hi"), "{transcript}");
    assert!(
        transcript.contains("PATH="),
        "the command's environment: {transcript}"
    );
    assert!(!transcript.contains(KEY), "{transcript}");
    for dir in dirs {
        assert_eq!(files_holding(dir, KEY), Vec::<String>::new());
    }
}

#[test]
fn a_refused_key_opens_providers_and_a_busy_provider_offers_retry_that_works() {
    // 401, then three 503 (the first try and the transport's two retries),
    // then an answer for the person's Retry.
    let busy = || Answer::Json(503, r#"{"error":{"message":"overloaded"}}"#.into());
    let server = Loopback::start(vec![
        Answer::Json(401, r#"{"error":{"message":"bad key"}}"#.into()),
        busy(),
        busy(),
        busy(),
        openai_answer(
            "",
            &[("c1", "task__finish", r#"{"summary":"nothing to do"}"#)],
        ),
    ]);
    let (_dir, root) = fixture_workspace(&[("a.txt", "a\n")]);
    let keys = ProviderSetup::in_memory();
    keys.store
        .set(
            &ProviderId::new("openai").unwrap(),
            &Secret::new("sk-wrong"),
        )
        .unwrap();
    let mut h = harness_keys(Some(root), keys, |app| app.crash_notice = None);
    use_openai(&mut h, &server.base_url, "m");
    let ctx = egui::Context::default();
    // Ctrl+Enter in the composer runs it.
    type_prompt(&mut h, "do nothing");
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Enter);
    h.run_steps(2);
    // The message moved from the composer into the conversation, without
    // a new line.
    assert_eq!(h.state().agent.prompt, "");
    assert_eq!(
        h.state().agent.current().transcript.entries().front(),
        Some(&crate::window::transcript::Entry::User("do nothing".into()))
    );
    run_until(&mut h, "the refused key", |h| {
        !h.state().agent.current().running && h.query_by_label("Open Providers").is_some()
    });
    h.get_by_label_contains("not set up for this (PROVIDER_AUTH)");
    h.get_by_label("Use the local agent and retry");
    assert!(h.query_by_label("Retry").is_none());
    h.get_by_label("Open Providers").click();
    run_until(&mut h, "the Providers page", |h| {
        h.query_by_label("OpenAI API key").is_some()
    });

    // Run again: the provider is busy past the transport's retries.
    h.state_mut().run(
        Command::Agent(AgentCommand::AgentPrompt("do nothing".into())),
        &ctx,
    );
    h.state_mut()
        .run(Command::Agent(AgentCommand::RunTask), &ctx);
    run_until(&mut h, "the busy provider", |h| {
        !h.state().agent.current().running && h.query_by_label("Retry").is_some()
    });
    h.get_by_label_contains("could not answer (PROVIDER_UNAVAILABLE)");
    h.get_by_label("Retry").click();
    run_until(&mut h, "the retried task's end", |h| {
        h.query_by_label_contains("Accept it as completed?")
            .is_some()
    });
    h.get_by_label("Accept").click();
    run_until(&mut h, "the retried task", |h| {
        h.state().agent.tasks.len() == 3 && !h.state().agent.current().running
    });
    assert_eq!(
        h.state().agent.tasks[0].state,
        "completed: a person approved it"
    );
    assert_eq!(h.state().agent.current().failure, None);
    assert_eq!(server.seen().len(), 5);
}

/// The child side of the Secret Service test; a no-op unless the parent
/// set the scenario.
#[test]
fn keyring_child() {
    let Ok(base_url) = std::env::var("COCODE_KEYRING_CHILD_URL") else {
        return;
    };
    let (_dir, root) = fixture_workspace(&[("a.txt", "a\n")]);
    let settings_dir = tempfile::tempdir().unwrap();
    let keys = ProviderSetup {
        settings_file: Some(settings_dir.path().join("providers.json")),
        ..ProviderSetup::system(Arc::new(cocode_toolchain::vault::KeyringVault))
    };
    let mut h = harness_keys(Some(root), keys, |app| app.crash_notice = None);
    set_up_openai(&mut h, &base_url, KEY);
    println!(
        "page {}",
        openai(&h).map(|k| k.phrase()).unwrap_or_default()
    );
    let stored = cocode_toolchain::vault::KeyringVault
        .get(&ProviderId::new("openai").unwrap())
        .map(|s| s.map(|s| s.expose().to_owned()));
    println!("store {}", stored.ok().flatten().unwrap_or_default());
    let ctx = egui::Context::default();
    h.state_mut().run(
        Command::Agent(AgentCommand::AgentBackend("openai".into())),
        &ctx,
    );
    h.state_mut().run(
        Command::Agent(AgentCommand::AgentModel(Some("m".into()))),
        &ctx,
    );
    type_prompt_and_run(&mut h, "finish");
    accept_completion(&mut h);
    run_until(&mut h, "the end of the task", |h| {
        !h.state().agent.current().running && !h.state().agent.tasks.is_empty()
    });
    println!("task {}", h.state().agent.tasks[0].state);
}

#[test]
fn a_key_set_on_the_page_lands_in_a_real_secret_service_and_the_next_task_uses_it() {
    if !(peers::require_program("dbus-run-session")
        && peers::require_program("gnome-keyring-daemon"))
    {
        return;
    }
    let server = Loopback::start(vec![openai_answer(
        "",
        &[("c1", "task__finish", r#"{"summary":"nothing to do"}"#)],
    )]);
    let home = tempfile::tempdir().unwrap();
    let runtime = home.path().join("runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::set_permissions(
        &runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let exe = std::env::current_exe().unwrap();
    let script = "echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null\n\
                  \"$EXE\" --exact window::providers::tests::keyring_child --nocapture --test-threads=1 --quiet \
                  | grep -E '^(page|store|task) '";
    let out = std::process::Command::new("dbus-run-session")
        .args(["--", "bash", "-c", script])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("EXE", exe)
        .env("COCODE_KEYRING_CHILD_URL", &server.base_url)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "page key stored in the credential store\nstore {KEY}\ntask completed: a person approved it\n"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].headers["authorization"], format!("Bearer {KEY}"));
}

/// Types `url` as `OpenAI`'s address and uses it, through the app's
/// commands (the page's field and button send the same).
fn send_openai_address(h: &mut Harness<'static, CocodeApp>, url: &str) {
    let ctx = egui::Context::default();
    h.state_mut().run(
        Command::Agent(AgentCommand::ProviderUrlDraft {
            id: "openai".into(),
            text: url.to_owned(),
        }),
        &ctx,
    );
    h.state_mut().run(
        Command::Agent(AgentCommand::Provider(
            crate::window::command::ProviderAction::SaveUrl {
                id: "openai".into(),
                reset: false,
            },
        )),
        &ctx,
    );
}

/// Points `OpenAI` at `base_url` (its key stored beforehand) and picks it
/// with `model` in the composer, through the app's commands.
fn use_openai(h: &mut Harness<'static, CocodeApp>, base_url: &str, model: &str) {
    run_until(h, "the providers", |h| openai(h).is_some());
    send_openai_address(h, base_url);
    run_until(h, "the new address", |h| {
        h.state()
            .providers
            .notes
            .get("openai")
            .is_some_and(|(_, ok)| *ok)
    });
    let ctx = egui::Context::default();
    h.state_mut().run(
        Command::Agent(AgentCommand::AgentBackend("openai".into())),
        &ctx,
    );
    h.state_mut().run(
        Command::Agent(AgentCommand::AgentModel(Some(model.into()))),
        &ctx,
    );
}

#[test]
fn an_agent_that_asks_a_question_waits_for_the_reply_and_goes_on_with_the_whole_conversation() {
    let server = Loopback::start(vec![
        openai_answer("Which file should get the greeting?", &[]),
        openai_answer(
            "Writing it.",
            &[(
                "c1",
                "workspace__writeFile",
                r#"{"path":"greeting.txt","content":"안녕\n"}"#,
            )],
        ),
        openai_answer(
            "",
            &[("c2", "task__finish", r#"{"summary":"greeting written"}"#)],
        ),
    ]);
    let (_dir, root) = fixture_workspace(&[("a.txt", "a\n")]);
    let keys = ProviderSetup::in_memory();
    keys.store
        .set(&ProviderId::new("openai").unwrap(), &Secret::new(KEY))
        .unwrap();
    let mut h = harness_keys(Some(root.clone()), keys, |app| app.crash_notice = None);
    use_openai(&mut h, &server.base_url, "m");
    type_prompt_and_run(&mut h, "write a greeting");
    run_until(&mut h, "the question", |h| {
        h.state().agent.current().awaiting_reply.is_some()
    });
    h.get_by_label(
        "The agent's turn ended without finishing the task: reply to go on, or finish and verify.",
    );
    assert!(h.state().agent.current().running, "the task is not over");
    type_prompt(&mut h, "greeting.txt, please");
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Enter);
    h.run_steps(2);
    // The focus leaves the field so that Enter answers the approval card.
    h.get_by_label("Tasks (1)").click();
    approve_and_accept(&mut h, &["write a file"]);
    assert_eq!(
        std::fs::read_to_string(root.join("greeting.txt")).unwrap(),
        "안녕\n"
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 3);
    let second: serde_json::Value = serde_json::from_str(&seen[1].body).unwrap();
    let said: Vec<(String, String)> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_owned(),
                m["content"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        said,
        vec![
            ("user".to_owned(), "write a greeting".to_owned()),
            (
                "assistant".to_owned(),
                "Which file should get the greeting?".to_owned()
            ),
            ("user".to_owned(), "greeting.txt, please".to_owned()),
        ],
        "the agent goes on with the whole conversation"
    );
    let transcript = h.state().agent.current().transcript.text();
    assert!(
        transcript.contains("agent:\n  Which file should get the greeting?\n")
            && transcript.contains("you:\n  greeting.txt, please\n"),
        "{transcript}"
    );
    assert_eq!(h.state().agent.tasks.len(), 1, "one task, two turns");
}

#[test]
fn a_settings_file_that_cannot_be_read_is_reported_and_never_overwritten() {
    let (_dir, root) = fixture_workspace(&[("a.txt", "a\n")]);
    let settings_dir = tempfile::tempdir().unwrap();
    let file = settings_dir.path().join("providers.json");
    std::fs::write(&file, "{ not json").unwrap();
    let keys = ProviderSetup {
        settings_file: Some(file.clone()),
        ..ProviderSetup::in_memory()
    };
    let mut h = harness_keys(Some(root), keys, |app| app.crash_notice = None);
    run_until(&mut h, "the providers and the report", |h| {
        openai(h).is_some() && h.state().providers.notes.contains_key("")
    });
    let (text, ok) = h.state().providers.notes[""].clone();
    assert!(!ok);
    assert!(
        text.starts_with(&format!("{} is not provider settings", file.display()))
            && text.ends_with("; the presets are used"),
        "{text}"
    );
    // A new address is refused: the file stays as the person left it and
    // the preset stays in use.
    send_openai_address(&mut h, "http://127.0.0.1:9/v1");
    run_until(&mut h, "the refusal", |h| {
        h.state().providers.notes.contains_key("openai")
    });
    assert_eq!(
        h.state().providers.notes["openai"],
        (
            format!(
                "{} could not be read, so it is left as it is: fix or remove it first",
                file.display()
            ),
            false
        )
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{ not json");
    assert_eq!(
        h.state()
            .providers
            .row("openai")
            .and_then(|r| r.base_url.clone())
            .as_deref(),
        Some("https://api.openai.com/v1")
    );
}

#[test]
fn a_task_runs_on_anthropics_wire_with_the_key_set_on_the_page() {
    let server = Loopback::start(vec![
        anthropic_answer(
            "I will **write** `out.txt`.",
            &[(
                "toolu_1",
                "workspace__writeFile",
                r#"{"path":"out.txt","content":"hi\n"}"#,
            )],
        ),
        anthropic_answer(
            "Done.",
            &[("toolu_2", "task__finish", r#"{"summary":"wrote out.txt"}"#)],
        ),
    ]);
    // Anthropic's address has no `/v1`: requests go to `/v1/messages`.
    let address = server.base_url.trim_end_matches("/v1").to_owned();
    let (_dir, root) = fixture_workspace(&[("README.md", "# 안녕\n")]);
    let settings_dir = tempfile::tempdir().unwrap();
    let keys = ProviderSetup {
        store: Arc::new(SessionVault::default()),
        session: Arc::new(SessionVault::default()),
        settings_file: Some(settings_dir.path().join("providers.json")),
    };
    let mut h = harness_keys(Some(root.clone()), keys, |app| app.crash_notice = None);
    run_until(&mut h, "the providers", |h| openai(h).is_some());
    set_up(&mut h, ("anthropic", "Anthropic"), &address, KEY);
    h.state_mut().run(
        Command::Window(WindowCommand::ShowPanel(PanelId::Agent)),
        &egui::Context::default(),
    );
    h.run_steps(2);
    pick(&mut h, "anthropic", None);
    write_out_txt(&mut h, &root, &["write a file"]);
    let seen = server.seen();
    assert_eq!(
        server.requests(),
        vec!["POST /v1/messages", "POST /v1/messages"]
    );
    for s in &seen {
        assert_eq!(s.headers["x-api-key"], KEY);
        assert!(s.headers.contains_key("anthropic-version"));
    }
    // The second request carries the write's result back to the model.
    let second: serde_json::Value = serde_json::from_str(&seen[1].body).unwrap();
    let answered: Vec<serde_json::Value> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["tool_use_id"].clone())
        .collect();
    assert_eq!(answered, vec![serde_json::json!("toolu_1")]);
    // Two requests, each counted as the provider reported them.
    let spent = h.state().agent.current().transcript.tokens();
    assert_eq!((spent.input, spent.output), (1_800, 40));
    let transcript = h.state().agent.current().transcript.text();
    assert!(
        transcript.contains("  I will **write** `out.txt`."),
        "{transcript}"
    );
    assert!(transcript.contains("    +hi"), "{transcript}");
    assert!(!transcript.contains(KEY), "{transcript}");
    for dir in [root.as_path(), settings_dir.path()] {
        assert_eq!(files_holding(dir, KEY), Vec::<String>::new());
    }
}

/// A built-in agent that read three large files and asked a question: the
/// meter shows the provider's count against the model's window, and
/// "Compact now" leaves the old results out and has the model summarize
/// the earlier turns; the marker says so, the meter goes down, and the
/// task still waits for the reply.
#[test]
fn compact_now_shortens_the_conversation_while_the_agent_waits_for_a_reply() {
    let read = |id: &str, path: &str| {
        crate::window::loopback::openai_answer_counting(
            "",
            &[(
                id,
                "workspace__readFile",
                &format!(r#"{{"path":"{path}"}}"#),
            )],
            5_000,
        )
    };
    let server = Loopback::start(vec![
        read("c1", "a.txt"),
        read("c2", "b.txt"),
        read("c3", "c.txt"),
        crate::window::loopback::openai_answer_counting("Which file should I change?", &[], 20_000),
        openai_answer(
            "Goal: change one of three files. Files: a.txt, b.txt, c.txt read.",
            &[],
        ),
    ]);
    let big = "a line of a large file that fills the context\n".repeat(400);
    let (_dir, root) = fixture_workspace(&[("a.txt", &big), ("b.txt", &big), ("c.txt", &big)]);
    let keys = ProviderSetup::in_memory();
    keys.store
        .set(&ProviderId::new("openai").unwrap(), &Secret::new(KEY))
        .unwrap();
    let mut h = harness_keys(Some(root), keys, |app| app.crash_notice = None);
    use_openai(&mut h, &server.base_url, "gpt-4o");
    type_prompt_and_run(&mut h, "change one of the files");
    run_until(&mut h, "the question", |h| {
        h.state().agent.current().awaiting_reply.is_some()
    });
    assert_eq!(
        h.state().agent.current().transcript.context(),
        Some((20_000, 128_000))
    );
    h.get_by_label("Compact now").click();
    run_until(&mut h, "the compaction and the question again", |h| {
        h.state()
            .agent
            .current()
            .transcript
            .text()
            .contains("context compacted")
            && h.state().agent.current().awaiting_reply.is_some()
    });
    let text = h.state().agent.current().transcript.text();
    assert!(
        text.contains("2 old tool result(s) left out, 5 earlier message(s) summarized)"),
        "{text}"
    );
    let (used, size) = h.state().agent.current().transcript.context().unwrap();
    assert_eq!(size, 128_000);
    assert!(used < 20_000, "{used}");
    h.get_by_label("Context compacted");
    // The summary request offered no tools.
    let seen = server.seen();
    assert_eq!(seen.len(), 5);
    let summary: serde_json::Value = serde_json::from_str(&seen[4].body).unwrap();
    assert!(summary.get("tools").is_none(), "{summary}");
    assert!(h.state().agent.current().running, "the task still waits");
}
