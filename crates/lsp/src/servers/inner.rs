//! The servers' shared state at work: slots and their states, opening
//! documents on a server, pulling and storing diagnostics, starting a
//! server (initialize, capabilities) and what follows its end.

// Tests build it with its parent under `cfg(test)`, where the lint is quiet.
#[cfg_attr(
    not(test),
    expect(
        clippy::wildcard_imports,
        reason = "a part of its parent's impl, cut out of one file: it names what the parent names"
    )
)]
use super::*;

impl Inner {
    pub(super) fn slot(&self, id: &str) -> Arc<Slot> {
        Arc::clone(lock(&self.slots).entry(id.to_owned()).or_insert_with(|| {
            Arc::new(Slot {
                start: tokio::sync::Mutex::new(()),
                state: Mutex::new(SlotState::Idle),
                crashes: Mutex::new(0),
            })
        }))
    }

    /// Whether a server waits for the person's trust.
    pub(super) fn held(&self, spec: &ServerSpec) -> bool {
        spec.needs_trust && !lock(&self.trusted).contains(&spec.id)
    }

    /// What the running server `id` says it is doing.
    pub(super) fn work_of(&self, id: &str) -> Option<String> {
        let slot = lock(&self.slots).get(id).map(Arc::clone)?;
        let state = lock(&slot.state);
        match &*state {
            SlotState::Running(r) => lock(&r.work).describe(),
            _ => None,
        }
    }

    pub(super) fn state_of(&self, spec: &ServerSpec) -> ServerState {
        if let Some(slot) = lock(&self.slots).get(&spec.id) {
            match &*lock(&slot.state) {
                SlotState::Idle => {}
                SlotState::Starting(_) => return ServerState::Starting,
                SlotState::Running(r) => {
                    // Its end is being handled: it restarts or stops.
                    return match r.conn.ended() {
                        None => ServerState::Running,
                        Some(reason) => ServerState::Restarting { reason },
                    };
                }
                SlotState::Restarting { reason } => {
                    return ServerState::Restarting {
                        reason: reason.clone(),
                    };
                }
                SlotState::Failed { reason } => {
                    return ServerState::Failed {
                        reason: reason.clone(),
                    };
                }
            }
        }
        match spec
            .command
            .first()
            .and_then(|p| find_program(p, self.path_var.as_deref()))
        {
            // A program that is not there cannot run: the install hint
            // comes first, the question of trust once it is installed.
            Some(_) if self.held(spec) => ServerState::Untrusted {
                command: spec.command.clone(),
            },
            Some(program) => ServerState::Idle { program },
            None => ServerState::NotInstalled {
                install: spec.install.clone(),
            },
        }
    }

    pub(super) fn relative(&self, file: &Path) -> Option<NormalizedPath> {
        let rel = file.strip_prefix(&self.root).ok()?;
        normalize(&rel.to_string_lossy(), self.options).ok()
    }

    /// The text of a file for converting positions: the open document's,
    /// else the file on disk.
    pub(super) fn rope_of(&self, rel: Option<&NormalizedPath>, file: &Path) -> Option<Rope> {
        if let Some(rel) = rel
            && let Some(doc) = lock(&self.docs).get(rel)
        {
            return Some(doc.rope.clone());
        }
        std::fs::read_to_string(file)
            .ok()
            .map(|t| Rope::from_str(&t))
    }

    pub(super) fn running_for(&self, path: &NormalizedPath) -> Option<Arc<Running>> {
        let server = lock(&self.docs).get(path)?.server.clone();
        let slot = lock(&self.slots).get(&server).cloned()?;
        let state = lock(&slot.state);
        match &*state {
            SlotState::Running(r) if r.conn.ended().is_none() => Some(Arc::clone(r)),
            _ => None,
        }
    }

    /// The running server, the document's URI and the server's position
    /// of `pos`, when the server offers the feature.
    pub(super) fn position(
        &self,
        path: &NormalizedPath,
        pos: TextPos,
        offers: impl Fn(&Running) -> bool,
    ) -> Option<(Arc<Running>, String, lsp_types::Position)> {
        let server = self.running_for(path).filter(|s| offers(s))?;
        let docs = lock(&self.docs);
        let doc = docs.get(path)?;
        let lsp_pos = to_lsp(&doc.rope, pos, server.caps.encoding);
        Some((Arc::clone(&server), doc.uri.clone(), lsp_pos))
    }

    /// Sends `didOpen` for a document the server has not been sent.
    pub(super) fn open_on(&self, server: &Running, path: &NormalizedPath) {
        let docs = lock(&self.docs);
        let Some(doc) = docs.get(path) else { return };
        if !lock(&server.opened).insert(path.clone()) {
            return;
        }
        server.conn.notify(
            "textDocument/didOpen",
            &json!({ "textDocument": {
                "uri": doc.uri,
                "languageId": doc.language,
                "version": doc.version,
                "text": doc.rope.to_string(),
            }}),
        );
    }

    /// Whether the server offers pull diagnostics (in its capabilities, or
    /// registered since).
    fn pulls(server: &Running) -> bool {
        server.caps.pull || !lock(&server.pull_registrations).is_empty()
    }

    /// Asks a pull-diagnostics server for a document's report. A server
    /// that cancels the pull (the document changed, or it asks to be
    /// asked again) is asked again, a few times at most.
    pub(super) fn pull(self: &Arc<Self>, server: &Arc<Running>, path: &NormalizedPath) {
        self.pull_again(server, path, PULL_RETRIES);
    }

    fn pull_again(self: &Arc<Self>, server: &Arc<Running>, path: &NormalizedPath, retries: u32) {
        if !Self::pulls(server) {
            return;
        }
        let Some((uri, version)) = lock(&self.docs)
            .get(path)
            .map(|d| (d.uri.clone(), d.version))
        else {
            return;
        };
        let me = Arc::downgrade(self);
        let server = Arc::clone(server);
        let path = path.clone();
        lock(&server.work).pulls += 1;
        self.runtime.spawn(async move {
            let Some(timeout) = me.upgrade().map(|m| m.timeouts.request) else {
                return;
            };
            let answer = server
                .conn
                .request(
                    "textDocument/diagnostic",
                    json!({ "textDocument": { "uri": uri } }),
                    timeout,
                )
                .await;
            let Some(me) = me.upgrade() else { return };
            let again = matches!(
                &answer,
                Err(LspError::Server { code, .. })
                    if *code == CONTENT_MODIFIED || *code == SERVER_CANCELLED
            ) && retries > 0;
            if again {
                // Asked again before this one counts as ended: a wait sees
                // the server busy throughout.
                me.pull_again(&server, &path, retries - 1);
            }
            {
                let mut work = lock(&server.work);
                work.pulls = work.pulls.saturating_sub(1);
                work.last = tokio::time::Instant::now();
            }
            me.reported.notify_waiters();
            let Ok(result) = answer else {
                return;
            };
            if result["kind"] != "full" {
                return;
            }
            let Ok(items) =
                serde_json::from_value::<Vec<lsp_types::Diagnostic>>(result["items"].clone())
            else {
                return;
            };
            me.store(&path, &items, server.caps.encoding, Some(version));
        });
    }

    /// Asks again for every document the server has open.
    fn pull_all(self: &Arc<Self>, server: &Arc<Running>) {
        let paths: Vec<NormalizedPath> = lock(&server.opened).iter().cloned().collect();
        for path in &paths {
            self.pull(server, path);
        }
    }

    /// Whether the last pull of `path` answered for the version the server
    /// has now.
    pub(super) fn pulled_current(&self, path: &NormalizedPath) -> bool {
        let Some(version) = lock(&self.docs).get(path).map(|d| d.version) else {
            return false;
        };
        lock(&self.reports)
            .get(path)
            .is_some_and(|r| r.pulled_version == Some(version))
    }

    /// What cocode answers for a `workspace/configuration` section asked by
    /// the server `id`: with [`Scope::OpenDocuments`], the `python` section
    /// (pyright's) includes only the documents open on it — unless a path
    /// holds a glob character (pyright reads `include` as globs), then the
    /// server's defaults, as for every other section.
    pub(super) fn section(&self, id: &str, section: &str) -> Value {
        if self.scope != Scope::OpenDocuments || section != "python" {
            return Value::Null;
        }
        let include: Vec<String> = lock(&self.docs)
            .iter()
            .filter(|(_, d)| d.server == id)
            .map(|(p, _)| self.root.join(p.as_str()).to_string_lossy().into_owned())
            .collect();
        if include.is_empty() || include.iter().any(|p| p.contains(['*', '?', '[', ']'])) {
            return Value::Null;
        }
        // With an `analysis` section pyright reads `autoSearchPaths` from
        // it (off when absent); on, as without one.
        json!({ "analysis": { "include": include, "autoSearchPaths": true } })
    }

    /// Keeps a report (pushed, or pulled for a document version) for a
    /// workspace file.
    pub(super) fn store(
        &self,
        path: &NormalizedPath,
        items: &[lsp_types::Diagnostic],
        encoding: PositionEncoding,
        pulled: Option<i32>,
    ) {
        let rope = self.rope_of(Some(path), &self.root.join(path.as_str()));
        let converted: Vec<Diagnostic> = rope
            .map(|rope| {
                items
                    .iter()
                    .map(|d| Diagnostic::from_lsp(d, &rope, encoding))
                    .collect()
            })
            .unwrap_or_default();
        {
            let mut reports = lock(&self.reports);
            let r = reports.entry(path.clone()).or_default();
            if let Some(version) = pulled {
                r.pulled = converted;
                r.pulled_version = Some(version);
            } else {
                r.pushed = converted;
            }
            r.reported = true;
        }
        self.reported.notify_waiters();
        (self.listener)(LspEvent::Diagnostics(path.clone()));
    }

    /// A server registering or dropping pull diagnostics: while any of its
    /// registrations stands its documents are pulled (now, and after each
    /// change); when the last goes, what it answered no longer counts.
    fn on_registration(self: &Arc<Self>, server: &Arc<Running>, note: &Notification) {
        // The protocol spells the second list "unregisterations".
        let list = if note.method == "client/registerCapability" {
            &note.params["registrations"]
        } else {
            &note.params["unregisterations"]
        };
        let ids: Vec<String> = list
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["method"] == "textDocument/diagnostic")
            .map(|r| r["id"].as_str().unwrap_or_default().to_owned())
            .collect();
        if ids.is_empty() {
            return;
        }
        let pulls = {
            let mut registered = lock(&server.pull_registrations);
            if note.method == "client/registerCapability" {
                registered.extend(ids);
            } else {
                for id in &ids {
                    registered.remove(id);
                }
            }
            !registered.is_empty()
        };
        if pulls {
            self.pull_all(server);
        } else {
            // What it said when pulled no longer stands as its
            // answer.
            let opened: Vec<NormalizedPath> = lock(&server.opened).iter().cloned().collect();
            let mut reports = lock(&self.reports);
            for path in &opened {
                if let Some(r) = reports.get_mut(path) {
                    r.pulled.clear();
                    r.pulled_version = None;
                }
            }
        }
    }

    pub(super) fn on_notification(self: &Arc<Self>, server: &Arc<Running>, note: Notification) {
        match note.method.as_str() {
            "client/registerCapability" | "client/unregisterCapability" => {
                self.on_registration(server, &note);
                return;
            }
            "workspace/diagnostic/refresh" => {
                self.pull_all(server);
                return;
            }
            "$/progress" => {
                let token = match &note.params["token"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                {
                    let mut work = lock(&server.work);
                    let value = &note.params["value"];
                    let text = |key: &str| value[key].as_str().map(str::to_owned);
                    let percent = value["percentage"]
                        .as_u64()
                        .and_then(|p| u32::try_from(p.min(100)).ok());
                    match value["kind"].as_str() {
                        Some("begin") => {
                            let title = text("title").unwrap_or_else(|| "working".to_owned());
                            work.progress
                                .insert(token, (title, text("message"), percent));
                        }
                        Some("report") => {
                            if let Some(entry) = work.progress.get_mut(&token) {
                                if let Some(m) = text("message") {
                                    entry.1 = Some(m);
                                }
                                if percent.is_some() {
                                    entry.2 = percent;
                                }
                            }
                        }
                        Some("end") => {
                            work.progress.remove(&token);
                        }
                        _ => {}
                    }
                    work.last = tokio::time::Instant::now();
                }
                self.reported.notify_waiters();
                (self.listener)(LspEvent::Servers);
                return;
            }
            "experimental/serverStatus" => {
                {
                    let mut work = lock(&server.work);
                    work.quiescent = note.params["quiescent"].as_bool().unwrap_or(true);
                    work.last = tokio::time::Instant::now();
                }
                self.reported.notify_waiters();
                (self.listener)(LspEvent::Servers);
                return;
            }
            "textDocument/publishDiagnostics" => {
                lock(&server.work).last = tokio::time::Instant::now();
            }
            _ => return,
        }
        let Ok(params) = serde_json::from_value::<lsp_types::PublishDiagnosticsParams>(note.params)
        else {
            tracing::warn!("a language server published diagnostics cocode cannot read");
            return;
        };
        let Some(path) = path_of_uri(params.uri.as_str()).and_then(|f| self.relative(&f)) else {
            return;
        };
        self.store(&path, &params.diagnostics, server.caps.encoding, None);
    }

    /// The running server of `spec`, started (and its open documents sent)
    /// if it is not running.
    pub(super) async fn ensure(
        self: &Arc<Self>,
        spec: &ServerSpec,
    ) -> Result<Arc<Running>, LspError> {
        let slot = self.slot(&spec.id);
        let _starting = slot.start.lock().await;
        {
            let state = lock(&slot.state);
            match &*state {
                SlotState::Running(r) if r.conn.ended().is_none() => return Ok(Arc::clone(r)),
                SlotState::Failed { reason } => {
                    return Err(LspError::Stopped {
                        server: spec.id.clone(),
                        reason: reason.clone(),
                    });
                }
                _ => {}
            }
        }
        *lock(&slot.state) = SlotState::Starting(None);
        (self.listener)(LspEvent::Servers);
        match self.start(spec).await {
            Ok(server) => {
                *lock(&slot.state) = SlotState::Running(Arc::clone(&server));
                (self.listener)(LspEvent::Servers);
                let paths: Vec<NormalizedPath> = lock(&self.docs)
                    .iter()
                    .filter(|(_, d)| d.server == spec.id)
                    .map(|(p, _)| p.clone())
                    .collect();
                for path in &paths {
                    self.open_on(&server, path);
                    self.pull(&server, path);
                }
                Ok(server)
            }
            Err(e) => {
                *lock(&slot.state) = match &e {
                    LspError::NotInstalled { .. } | LspError::Untrusted { .. } => SlotState::Idle,
                    // Its own words, without "stopped" twice.
                    LspError::Closed { reason } => SlotState::Failed {
                        reason: reason.clone(),
                    },
                    other => SlotState::Failed {
                        reason: other.to_string(),
                    },
                };
                (self.listener)(LspEvent::Servers);
                Err(e)
            }
        }
    }

    /// `initialize`'s parameters for `spec`, with its own options.
    pub(super) fn initialize_params(&self, spec: &ServerSpec) -> Value {
        let mut params = json!({
            "processId": std::process::id(),
            "clientInfo": { "name": "cocode", "version": env!("CARGO_PKG_VERSION") },
            "rootUri": self.root_uri,
            "rootPath": self.root.to_string_lossy(),
            "workspaceFolders": [{ "uri": self.root_uri, "name": "workspace" }],
            "capabilities": client_capabilities(spec.pull_is_final),
        });
        if let Some(options) = &spec.initialization_options {
            params["initializationOptions"] = options.clone();
        }
        params
    }

    pub(super) async fn start(
        self: &Arc<Self>,
        spec: &ServerSpec,
    ) -> Result<Arc<Running>, LspError> {
        let program = spec.command.first().ok_or_else(|| LspError::Stopped {
            server: spec.id.clone(),
            reason: "its command is empty".into(),
        })?;
        if find_program(program, self.path_var.as_deref()).is_none() {
            return Err(LspError::NotInstalled {
                server: spec.id.clone(),
                program: program.clone(),
                install: spec.install.clone(),
            });
        }
        if self.held(spec) {
            return Err(LspError::Untrusted {
                server: spec.id.clone(),
                command: cocode_core::shown::command(&spec.command),
            });
        }
        let handle = self
            .launcher
            .launch(LaunchSpec {
                argv: spec.command.clone(),
                cwd: self.root.clone(),
                env_overrides: BTreeMap::new(),
                profile: profile_of(spec)?,
                io: LaunchIo::PipedSplit,
                timeout: None,
                output_byte_limit: None,
                extra_writable: Vec::new(),
                secret_env: BTreeMap::new(),
                extra_hosts: Vec::new(),
            })
            .map_err(|e| LspError::Launch {
                server: spec.id.clone(),
                message: e.to_string(),
            })?;
        let settings: crate::connection::Settings = {
            let me = Arc::downgrade(self);
            let id = spec.id.clone();
            Arc::new(move |section| {
                me.upgrade()
                    .map_or(Value::Null, |me| me.section(&id, section))
            })
        };
        let (conn, mut notes) = Connection::start(handle, self.root_uri.clone(), settings);
        let conn = Arc::new(conn);
        if let SlotState::Starting(starting) = &mut *lock(&self.slot(&spec.id).state) {
            *starting = Some(Arc::clone(&conn));
        }
        // A shutdown that gave up waiting for this connection has not
        // ended it.
        if self.closing.load(std::sync::atomic::Ordering::SeqCst) {
            conn.kill();
            return Err(LspError::Stopped {
                server: spec.id.clone(),
                reason: "cocode is closing".into(),
            });
        }
        let params = self.initialize_params(spec);
        let result = match conn
            .request("initialize", params, self.timeouts.initialize)
            .await
        {
            Ok(r) => r,
            Err(e) => {
                conn.kill();
                return Err(e);
            }
        };
        if self.closing.load(std::sync::atomic::Ordering::SeqCst) {
            conn.kill();
            return Err(LspError::Stopped {
                server: spec.id.clone(),
                reason: "cocode is closing".into(),
            });
        }
        conn.notify("initialized", &json!({}));
        let running = Arc::new(Running {
            conn,
            caps: read_capabilities(&result),
            pull_registrations: Mutex::default(),
            pull_is_final: spec.pull_is_final,
            opened: Mutex::default(),
            started: Instant::now(),
            work: Mutex::default(),
        });
        let me = Arc::downgrade(self);
        let weak_server = Arc::downgrade(&running);
        let id = spec.id.clone();
        self.runtime.spawn(async move {
            while let Some(note) = notes.recv().await {
                let (Some(me), Some(server)) = (me.upgrade(), weak_server.upgrade()) else {
                    return;
                };
                me.on_notification(&server, note);
            }
            if let Some(me) = me.upgrade() {
                Inner::ended(&me, &id, &weak_server);
            }
        });
        Ok(running)
    }

    /// A server's output ended: unless cocode is closing, it crashed. Its
    /// diagnostics go; it restarts after a backoff, or stays stopped after
    /// too many crashes in a row.
    pub(super) fn ended(self: &Arc<Self>, id: &str, server: &Weak<Running>) {
        let Some(slot) = lock(&self.slots).get(id).cloned() else {
            return;
        };
        let (reason, ran) = {
            let state = lock(&slot.state);
            match &*state {
                SlotState::Running(r) if Weak::ptr_eq(&Arc::downgrade(r), server) => (
                    r.conn.ended().unwrap_or_else(|| "it stopped".into()),
                    r.started.elapsed(),
                ),
                _ => return,
            }
        };
        let cleared: Vec<NormalizedPath> = {
            let docs = lock(&self.docs);
            let mut reports = lock(&self.reports);
            docs.iter()
                .filter(|(_, d)| d.server == id)
                .filter_map(|(p, _)| reports.remove(p).map(|_| p.clone()))
                .collect()
        };
        for p in cleared {
            (self.listener)(LspEvent::Diagnostics(p));
        }
        if self.closing.load(std::sync::atomic::Ordering::SeqCst) {
            *lock(&slot.state) = SlotState::Idle;
            return;
        }
        let crashes = {
            let mut crashes = lock(&slot.crashes);
            // A server that ran a while before crashing starts a new count.
            if ran > Duration::from_mins(1) {
                *crashes = 0;
            }
            *crashes += 1;
            *crashes
        };
        if crashes > MAX_RESTARTS {
            *lock(&slot.state) = SlotState::Failed {
                reason: format!("{reason} ({crashes} crashes in a row)"),
            };
            (self.listener)(LspEvent::Servers);
            return;
        }
        *lock(&slot.state) = SlotState::Restarting {
            reason: reason.clone(),
        };
        (self.listener)(LspEvent::Servers);
        let wait = self
            .timeouts
            .restart_base
            .saturating_mul(1 << (crashes - 1).min(10))
            .min(Duration::from_mins(1));
        let me = Arc::downgrade(self);
        let Some(spec) = self.registry.get(id).cloned() else {
            return;
        };
        self.runtime.spawn(async move {
            tokio::time::sleep(wait).await;
            if let Some(me) = me.upgrade()
                && let Err(e) = me.ensure(&spec).await
            {
                tracing::warn!("restarting {}: {e}", spec.id);
            }
        });
    }
}
