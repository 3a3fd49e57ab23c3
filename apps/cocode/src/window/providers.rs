//! Settings → Providers: the built-in agent's model providers, their API
//! keys in the OS credential store (or, when there is none, kept for this
//! session only, and said so), their base URLs and their model lists. A
//! worker on the process's runtime does every credential-store call (they
//! may wait on D-Bus) and every catalog request; the page's state is what
//! `views::providers` draws.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use cocode_agent::{LlmProviderRegistry, ProviderConfig, Transport, fetch_models};
use cocode_core::ProviderId;
use cocode_core::services::{CredentialVault, Secret};
use cocode_toolchain::vault::SessionVault;
use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;

use crate::host::provider_settings::{ProviderSettings, base_url_problem};
use crate::window::link::{Coalesce, Events, UiEnd, Waker, link};

/// Where a provider's key is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyState {
    /// The provider needs none (the local agent, local servers).
    NotNeeded,
    Stored,
    /// Kept in memory until the window closes.
    SessionOnly,
    Missing,
    /// The store could not be asked: its code and message.
    Unavailable {
        code: String,
        message: String,
    },
}

impl KeyState {
    /// The state in words.
    pub fn phrase(&self) -> String {
        match self {
            Self::NotNeeded => "no key needed".to_owned(),
            Self::Stored => "key stored in the credential store".to_owned(),
            Self::SessionOnly => {
                "key kept for this session only (there is no credential store)".to_owned()
            }
            Self::Missing => "no key stored".to_owned(),
            // The store's own words stay in the hover text.
            Self::Unavailable { code, message } => {
                format!("{} ({code})", message.split(": ").next().unwrap_or(message))
            }
        }
    }
}

/// One provider as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderRow {
    pub id: String,
    pub name: String,
    /// The address in use (the person's, or the preset's).
    pub base_url: Option<String>,
    /// The preset's address, to go back to.
    pub preset_url: Option<String>,
    pub requires_key: bool,
    pub key: KeyState,
    /// The preset's models (before a catalog was fetched).
    pub preset_models: Vec<String>,
    /// The model the composer picks for it.
    pub model: Option<String>,
}

/// Work for the provider worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderRequest {
    /// Look up every key again.
    Refresh,
    /// Store a key; `session_only` keeps it in memory instead.
    SetKey {
        id: String,
        key: Secret,
        session_only: bool,
    },
    DeleteKey {
        id: String,
    },
    /// Set (or, with `None`, reset) a base URL.
    SetBaseUrl {
        id: String,
        url: Option<String>,
    },
    /// Remember the model picked for a provider.
    SetModel {
        id: String,
        model: Option<String>,
    },
    /// Fetch the model list with the stored key (also "test connection").
    Models {
        id: String,
    },
}

/// What the worker reports.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderEvent {
    /// Every provider, after a load or any change.
    Rows(Vec<ProviderRow>),
    /// A provider's model list, or why it could not be fetched.
    Models {
        id: String,
        result: Result<Vec<String>, String>,
    },
    /// The providers new tasks use changed (a base URL).
    Registry(LlmProviderRegistry),
    /// What an action did, for its provider's row.
    Note { id: String, text: String, ok: bool },
}

impl Coalesce for ProviderEvent {}

/// A key as typed: its `Debug` never shows it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct KeyDraft(pub String);

impl std::fmt::Debug for KeyDraft {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeyDraft({} characters)", self.0.chars().count())
    }
}

/// The page's state.
#[derive(Debug, Default)]
pub struct ProvidersPanel {
    pub rows: Vec<ProviderRow>,
    /// Keys being typed, by provider.
    pub key_drafts: BTreeMap<String, KeyDraft>,
    /// Base URLs being typed, by provider.
    pub url_drafts: BTreeMap<String, String>,
    /// Fetched model lists (kept while the window is open).
    pub models: BTreeMap<String, Result<Vec<String>, String>>,
    /// Providers whose model list is being fetched.
    pub fetching: std::collections::BTreeSet<String>,
    /// The last action's outcome per provider: (text, ok).
    pub notes: BTreeMap<String, (String, bool)>,
    /// The settings file could not be read (its settings are not applied).
    pub settings_error: Option<String>,
    service: Option<ProviderService>,
}

impl ProvidersPanel {
    /// The models the composer offers for `provider`: the fetched list, or
    /// the preset's.
    pub fn models_of(&self, provider: &str) -> Vec<String> {
        match self.models.get(provider) {
            Some(Ok(models)) => models.clone(),
            _ => self
                .rows
                .iter()
                .find(|r| r.id == provider)
                .map(|r| r.preset_models.clone())
                .unwrap_or_default(),
        }
    }

    pub fn row(&self, id: &str) -> Option<&ProviderRow> {
        self.rows.iter().find(|r| r.id == id)
    }

    /// Starts the worker (once).
    pub fn start(&mut self, setup: &ProviderSetup, waker: &Waker, rt: &Handle) {
        if self.service.is_none() {
            self.service = Some(ProviderService::spawn(setup.clone(), waker.clone(), rt));
        }
    }

    pub fn send(&mut self, request: ProviderRequest) {
        if let ProviderRequest::Models { id } = &request {
            self.fetching.insert(id.clone());
        }
        if let Some(s) = &self.service {
            s.link.send(request);
        }
    }

    /// Applies the worker's reports; returns a new registry for the task
    /// service when one came.
    pub fn drain(&mut self) -> Option<LlmProviderRegistry> {
        let events = self.service.as_mut().map(|s| s.link.drain())?;
        let mut registry = None;
        for event in events {
            match event {
                ProviderEvent::Rows(rows) => self.rows = rows,
                ProviderEvent::Models { id, result } => {
                    self.fetching.remove(&id);
                    self.models.insert(id, result);
                }
                ProviderEvent::Registry(r) => registry = Some(r),
                ProviderEvent::Note { id, text, ok } => {
                    self.notes.insert(id, (text, ok));
                }
            }
        }
        registry
    }
}

/// What the worker is built from.
#[derive(Clone)]
pub struct ProviderSetup {
    /// The OS credential store (a test's stand-in in tests).
    pub store: Arc<dyn CredentialVault>,
    /// Keys kept for this session only; the workspace host reads them first.
    pub session: Arc<SessionVault>,
    /// `providers.json`; `None`: settings are not kept.
    pub settings_file: Option<PathBuf>,
}

impl std::fmt::Debug for ProviderSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderSetup")
            .field("settings_file", &self.settings_file)
            .finish_non_exhaustive()
    }
}

impl ProviderSetup {
    /// The credential store `store` (the OS's, from the composition root)
    /// and `<config dir>/cocode/providers.json`.
    pub fn system(store: Arc<dyn CredentialVault>) -> Self {
        Self {
            store,
            session: Arc::new(SessionVault::default()),
            settings_file: crate::host::provider_settings::settings_file(),
        }
    }

    /// Keys in memory only and no settings file (tests).
    pub fn in_memory() -> Self {
        Self {
            store: Arc::new(SessionVault::default()),
            session: Arc::new(SessionVault::default()),
            settings_file: None,
        }
    }

    /// The settings and the registry they make (the presets, and why,
    /// when the settings cannot be used).
    pub fn load(&self) -> (ProviderSettings, LlmProviderRegistry, Option<String>) {
        let presets = || {
            LlmProviderRegistry::with_presets()
                .unwrap_or_else(|e| unreachable!("the presets are valid: {e}"))
        };
        let Some(file) = &self.settings_file else {
            return (ProviderSettings::default(), presets(), None);
        };
        match ProviderSettings::load(file).and_then(|s| s.registry().map(|r| (s, r))) {
            Ok((settings, registry)) => (settings, registry, None),
            Err(e) => (
                ProviderSettings::default(),
                presets(),
                Some(format!("{e:#}; the presets are used")),
            ),
        }
    }
}

#[derive(Debug)]
struct ProviderService {
    link: UiEnd<ProviderRequest, ProviderEvent>,
}

impl ProviderService {
    fn spawn(setup: ProviderSetup, waker: Waker, rt: &Handle) -> Self {
        let (ui, mut worker) = link(waker);
        rt.spawn(async move {
            let events = worker.events;
            let Ok(mut state) = tokio::task::spawn_blocking(move || Worker::open(setup)).await
            else {
                return;
            };
            if let Some(why) = state.settings_error.take() {
                events
                    .send(ProviderEvent::Note {
                        id: String::new(),
                        text: why,
                        ok: false,
                    })
                    .await;
            }
            let rows = state.rows_off_thread().await;
            if !events.send(ProviderEvent::Rows(rows)).await {
                return;
            }
            while let Some(request) = worker.requests.recv().await {
                if !state.handle(request, &events).await {
                    break;
                }
            }
        });
        Self { link: ui }
    }
}

/// The worker's own state.
struct Worker {
    setup: ProviderSetup,
    settings: ProviderSettings,
    registry: LlmProviderRegistry,
    /// Why the settings file could not be used (reported once).
    settings_error: Option<String>,
    /// The settings file could not be used: it is never overwritten.
    settings_unusable: bool,
    transport: Option<Transport>,
}

impl Worker {
    fn open(setup: ProviderSetup) -> Self {
        let (settings, registry, settings_error) = setup.load();
        Self {
            transport: Transport::with_proxies(
                cocode_agent::RetryPolicy::default(),
                &crate::host::secrets::upstream_proxies(),
            )
            .ok(),
            setup,
            settings,
            registry,
            settings_unusable: settings_error.is_some(),
            settings_error,
        }
    }

    fn provider(&self, id: &str) -> Option<ProviderConfig> {
        let id = ProviderId::new(id).ok()?;
        self.registry.get(&id).cloned()
    }

    /// Every provider with its key's state (the store is asked off the
    /// runtime's workers).
    async fn rows_off_thread(&self) -> Vec<ProviderRow> {
        let providers = self.registry.providers().to_vec();
        let presets = LlmProviderRegistry::with_presets()
            .map(|r| r.providers().to_vec())
            .unwrap_or_default();
        let settings = self.settings.clone();
        let (store, session) = (
            Arc::clone(&self.setup.store),
            Arc::clone(&self.setup.session),
        );
        tokio::task::spawn_blocking(move || {
            providers
                .iter()
                .map(|p| ProviderRow {
                    id: p.id.to_string(),
                    name: p.display_name.clone(),
                    base_url: p.base_url.clone(),
                    preset_url: presets
                        .iter()
                        .find(|q| q.id == p.id)
                        .and_then(|q| q.base_url.clone()),
                    requires_key: p.requires_key,
                    key: key_state(p, store.as_ref(), &session),
                    preset_models: p.models.clone(),
                    model: settings.model(p.id.as_str()).map(str::to_owned),
                })
                .collect()
        })
        .await
        .unwrap_or_default()
    }

    /// Carries out one request; `false` when the window is gone.
    async fn handle(&mut self, request: ProviderRequest, events: &Events<ProviderEvent>) -> bool {
        let note = |id: &str, text: String, ok: bool| ProviderEvent::Note {
            id: id.to_owned(),
            text,
            ok,
        };
        let mut changed_registry = false;
        let reply = match request {
            ProviderRequest::Refresh => None,
            ProviderRequest::SetKey {
                id,
                key,
                session_only,
            } => Some(self.set_key(&id, key, session_only).await),
            ProviderRequest::DeleteKey { id } => Some(self.delete_key(&id).await),
            ProviderRequest::SetBaseUrl { id, url } => {
                let reply = self.set_base_url(&id, url).await;
                changed_registry = reply.2;
                Some((reply.0, reply.1))
            }
            ProviderRequest::SetModel { id, model } => {
                let mut settings = self.settings.clone();
                settings.set_model(&id, model);
                match self.save(settings).await {
                    Ok(()) => None,
                    Err(e) => Some((id, Err(e))),
                }
            }
            ProviderRequest::Models { id } => {
                let result = self.models(&id).await;
                let ok = match &result {
                    Ok(models) => format!("connected: {} model(s) offered", models.len()),
                    Err(e) => e.clone(),
                };
                let is_ok = result.is_ok();
                if !events
                    .send(ProviderEvent::Models {
                        id: id.clone(),
                        result,
                    })
                    .await
                {
                    return false;
                }
                Some((id, if is_ok { Ok(ok) } else { Err(ok) }))
            }
        };
        if let Some((id, outcome)) = reply {
            let event = match outcome {
                Ok(text) => note(&id, text, true),
                Err(text) => note(&id, text, false),
            };
            if !events.send(event).await {
                return false;
            }
        }
        if changed_registry
            && !events
                .send(ProviderEvent::Registry(self.registry.clone()))
                .await
        {
            return false;
        }
        events
            .send(ProviderEvent::Rows(self.rows_off_thread().await))
            .await
    }

    async fn set_key(
        &self,
        id: &str,
        key: Secret,
        session_only: bool,
    ) -> (String, Result<String, String>) {
        let Some(p) = self.provider(id) else {
            return (id.to_owned(), Err(format!("no provider “{id}”")));
        };
        if key.expose().trim().is_empty() {
            return (
                id.to_owned(),
                Err("the key is empty; nothing was stored".to_owned()),
            );
        }
        let key = Secret::new(key.expose().trim());
        let (store, session) = (
            Arc::clone(&self.setup.store),
            Arc::clone(&self.setup.session),
        );
        let result = tokio::task::spawn_blocking(move || {
            if session_only {
                session
                    .set(&p.id, &key)
                    .map(|()| {
                        format!(
                            "the key of {} is kept for this session only",
                            p.display_name
                        )
                    })
                    .map_err(|e| format!("{}: {e}", e.code()))
            } else {
                match store.set(&p.id, &key) {
                    Ok(()) => {
                        // The stored key wins from now on.
                        let _ = session.delete(&p.id);
                        Ok(format!(
                            "stored the key of {} in the credential store",
                            p.display_name
                        ))
                    }
                    Err(e) => Err(format!(
                        "{}: {e}; nothing was stored (keep it for this session only instead?)",
                        e.code()
                    )),
                }
            }
        })
        .await
        .unwrap_or_else(|e| Err(format!("the key was not stored: {e}")));
        (id.to_owned(), result)
    }

    async fn delete_key(&self, id: &str) -> (String, Result<String, String>) {
        let Some(p) = self.provider(id) else {
            return (id.to_owned(), Err(format!("no provider “{id}”")));
        };
        let (store, session) = (
            Arc::clone(&self.setup.store),
            Arc::clone(&self.setup.session),
        );
        let result = tokio::task::spawn_blocking(move || {
            let _ = session.delete(&p.id);
            store
                .delete(&p.id)
                .map(|()| format!("removed the key of {}", p.display_name))
                .map_err(|e| format!("{}: {e}", e.code()))
        })
        .await
        .unwrap_or_else(|e| Err(format!("the key was not removed: {e}")));
        (id.to_owned(), result)
    }

    /// Sets a base URL: checked, saved, then used by new tasks.
    async fn set_base_url(
        &mut self,
        id: &str,
        url: Option<String>,
    ) -> (String, Result<String, String>, bool) {
        let url = url.map(|u| u.trim().trim_end_matches('/').to_owned());
        if let Some(problem) = url.as_deref().and_then(base_url_problem) {
            return (id.to_owned(), Err(problem), false);
        }
        let mut settings = self.settings.clone();
        settings.set_base_url(id, url.clone());
        let registry = match settings.registry() {
            Ok(r) => r,
            Err(e) => return (id.to_owned(), Err(format!("{e:#}")), false),
        };
        if let Err(e) = self.save(settings).await {
            return (id.to_owned(), Err(e), false);
        }
        self.registry = registry;
        let text = match url {
            Some(url) => format!("new tasks use {url}"),
            None => "back to the preset address".to_owned(),
        };
        (id.to_owned(), Ok(text), true)
    }

    /// Saves `settings` (off the runtime's workers) and keeps them.
    async fn save(&mut self, settings: ProviderSettings) -> Result<(), String> {
        if let Some(file) = self.setup.settings_file.clone() {
            if self.settings_unusable {
                return Err(format!(
                    "{} could not be read, so it is left as it is: fix or remove it first",
                    file.display()
                ));
            }
            let copy = settings.clone();
            tokio::task::spawn_blocking(move || copy.save(&file))
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| format!("the settings were not saved: {e:#}"))?;
        }
        self.settings = settings;
        Ok(())
    }

    async fn models(&self, id: &str) -> Result<Vec<String>, String> {
        let p = self
            .provider(id)
            .ok_or_else(|| format!("no provider “{id}”"))?;
        let transport = self
            .transport
            .clone()
            .ok_or_else(|| "no HTTP client could be made".to_owned())?;
        let vault = cocode_toolchain::vault::LayeredVault {
            run: Arc::clone(&self.setup.session),
            store: Arc::clone(&self.setup.store),
        };
        let id_of = p.id.clone();
        let key = tokio::task::spawn_blocking(move || vault.get(&id_of))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("{}: {e}", e.code()))?;
        let cancel = CancellationToken::new();
        let models = fetch_models(
            &transport,
            &p,
            key.as_ref().map(Secret::expose),
            false,
            &cancel,
        )
        .await
        .map_err(|e| format!("{}: {}", e.code.as_str(), e.message))?;
        Ok(models.into_iter().map(|m| m.id).collect())
    }
}

fn key_state(p: &ProviderConfig, store: &dyn CredentialVault, session: &SessionVault) -> KeyState {
    if !p.requires_key {
        return KeyState::NotNeeded;
    }
    if matches!(session.get(&p.id), Ok(Some(_))) {
        return KeyState::SessionOnly;
    }
    match store.get(&p.id) {
        Ok(Some(_)) => KeyState::Stored,
        Ok(None) => KeyState::Missing,
        Err(e) => KeyState::Unavailable {
            code: e.code().to_owned(),
            message: e.to_string(),
        },
    }
}

#[cfg(all(test, target_os = "linux"))]
#[path = "providers_tests.rs"]
mod tests;
