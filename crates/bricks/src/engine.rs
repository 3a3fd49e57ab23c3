//! `Bricks`, the `BrickEngine`: checks a request completely in memory, then
//! stages, runs hooks and commits.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cocode_core::output::OutputBuffer;
use cocode_core::process::{
    ExitStatus, LaunchError, LaunchIo, LaunchSpec, ProcessLauncher, SandboxProfile,
};
use cocode_core::services::{BrickEngine, BrickInfo, ScaffoldError, ScaffoldRequest};
use cocode_core::workspace::{AppliedBrick, WorkspaceConfig};
use cocode_workspace::Layout;
use cocode_workspace::store::config_bytes;

use crate::catalog::BrickCatalog;
use crate::render::{self, Plan};
use crate::staging::Staging;

/// How much of a failing hook's output is quoted in the error.
const HOOK_OUTPUT_QUOTED: usize = 2000;

/// The brick engine over a catalog; hooks run through the launcher.
pub struct Bricks {
    catalog: BrickCatalog,
    launcher: Arc<dyn ProcessLauncher>,
}

impl std::fmt::Debug for Bricks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bricks")
            .field("catalog", &self.catalog)
            .finish_non_exhaustive()
    }
}

/// A request checked and rendered, ready to write.
struct Prepared {
    plan: Plan,
    /// What the new workspace records as its origin.
    applied: AppliedBrick,
    parent: PathBuf,
    destination: PathBuf,
}

impl Bricks {
    pub fn new(catalog: BrickCatalog, launcher: Arc<dyn ProcessLauncher>) -> Self {
        Self { catalog, launcher }
    }

    pub fn catalog(&self) -> &BrickCatalog {
        &self.catalog
    }

    fn prepare(&self, req: &ScaffoldRequest) -> Result<Prepared, ScaffoldError> {
        let reject = |m: String| ScaffoldError::RejectedBeforeStart(m);
        let brick = self.catalog.get(&req.brick).ok_or_else(|| {
            let names: Vec<&str> = self
                .catalog
                .iter()
                .map(|b| b.manifest.name.as_str())
                .collect();
            reject(format!(
                "no brick named {:?} (available: {})",
                req.brick,
                names.join(", ")
            ))
        })?;
        if !req.destination.is_absolute() {
            return Err(reject(format!(
                "the destination {} is not an absolute path",
                req.destination.display()
            )));
        }
        let folder_name = folder_name(&req.destination).map_err(reject)?;
        let parent = req
            .destination
            .parent()
            .ok_or_else(|| reject("the destination has no parent folder".to_owned()))?;
        let parent = dunce::canonicalize(parent)
            .ok()
            .filter(|p| p.is_dir())
            .ok_or_else(|| {
                reject(format!(
                    "the parent folder {} does not exist",
                    parent.display()
                ))
            })?;
        let destination = parent.join(&folder_name);
        if destination.symlink_metadata().is_ok() {
            return Err(reject(format!("{} already exists", destination.display())));
        }
        let context =
            render::resolve(&brick.manifest, &folder_name, &req.variables).map_err(reject)?;
        let plan = render::render(&brick.files, &brick.manifest.hooks, &context).map_err(reject)?;
        let applied = AppliedBrick {
            name: brick.manifest.name.clone(),
            version: brick.manifest.version.clone(),
        };
        Ok(Prepared {
            plan,
            applied,
            parent,
            destination,
        })
    }

    /// Runs one hook in the staging folder with the `tool` profile: the
    /// person chose the brick and there is no workspace or task yet, so it
    /// runs like a formatter would (whitelisted environment, no proxy).
    async fn run_hook(&self, argv: &[String], cwd: &Path, timeout: Duration) -> Result<(), String> {
        let spec = LaunchSpec {
            argv: argv.to_vec(),
            cwd: cwd.to_path_buf(),
            env_overrides: BTreeMap::new(),
            profile: SandboxProfile::Tool,
            io: LaunchIo::Piped,
            timeout: Some(timeout),
            output_byte_limit: Some(HOOK_OUTPUT_QUOTED),
            extra_writable: Vec::new(),
            secret_env: BTreeMap::new(),
            extra_hosts: Vec::new(),
        };
        let shown = argv.join(" ");
        let mut handle = self.launcher.launch(spec).map_err(|e| match e {
            LaunchError::NotFound(program) => {
                format!("hook `{shown}`: program not found: {program}")
            }
            other => format!("hook `{shown}`: {other}"),
        })?;
        let mut output = OutputBuffer::new(Some(HOOK_OUTPUT_QUOTED));
        while let Some(chunk) = handle.read_output().await {
            output.push(&chunk);
        }
        let status = handle
            .wait()
            .await
            .map_err(|e| format!("hook `{shown}`: {e}"))?;
        let tail = String::from_utf8_lossy(output.bytes())
            .trim_end()
            .to_owned();
        let ended = match status {
            ExitStatus::Code(0) => return Ok(()),
            ExitStatus::TimedOut => format!("ran longer than {} s", timeout.as_secs()),
            other => other.phrase(),
        };
        Err(if tail.is_empty() {
            format!("hook `{shown}` {ended}")
        } else {
            format!("hook `{shown}` {ended}:\n{tail}")
        })
    }

    async fn fill(
        &self,
        staging: &mut Staging,
        plan: &Plan,
        applied: &AppliedBrick,
    ) -> Result<(), String> {
        let timeout = Duration::from_secs(plan.timeout_secs);
        let cwd = staging.path().to_path_buf();
        for hook in &plan.pre {
            self.run_hook(hook, &cwd, timeout).await?;
        }
        for file in &plan.files {
            staging
                .write_file(&file.path, &file.bytes)
                .map_err(|e| format!("writing {}: {e}", file.path))?;
        }
        for hook in &plan.post {
            self.run_hook(hook, &cwd, timeout).await?;
        }
        // The new workspace knows what it was made from (`applied_bricks`
        // in its `workspace.json`); it moves into place with everything else.
        let config = WorkspaceConfig {
            applied_bricks: vec![applied.clone()],
            ..WorkspaceConfig::default()
        };
        let bytes = config_bytes(&config).map_err(|e| e.to_string())?;
        let rel = Layout::new(Path::new(""))
            .config_file()
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        staging
            .write_file(&rel, &bytes)
            .map_err(|e| format!("writing {rel}: {e}"))
    }
}

/// The destination's last segment, which must be a plain folder name every
/// supported OS can store.
fn folder_name(destination: &Path) -> Result<String, String> {
    let name = destination
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| format!("{} does not end in a folder name", destination.display()))?;
    let options = cocode_core::NormalizeOptions {
        case: cocode_core::CaseSensitivity::Sensitive,
        unicode: cocode_core::UnicodeSensitivity::Insensitive,
        style: cocode_core::PathStyle::Windows,
    };
    match cocode_core::path::normalize(name, options) {
        Ok(p) if p.as_str() == name => Ok(name.to_owned()),
        Ok(_) => Err(format!("{name:?} is not a plain folder name")),
        Err(e) => Err(format!("{name:?}: {e}")),
    }
}

#[async_trait::async_trait]
impl BrickEngine for Bricks {
    fn bricks(&self) -> Vec<BrickInfo> {
        self.catalog.infos()
    }

    fn validate(&self, req: &ScaffoldRequest) -> Result<(), ScaffoldError> {
        self.prepare(req).map(|_| ())
    }

    fn default_value(&self, brick: &str, variable: &str, destination: &Path) -> Option<String> {
        let var = self
            .catalog
            .get(brick)?
            .manifest
            .variables
            .iter()
            .find(|v| v.name == variable)?;
        let folder = destination.file_name()?.to_str()?;
        render::default_value(var, folder).ok().flatten()
    }

    async fn scaffold(&self, req: ScaffoldRequest) -> Result<PathBuf, ScaffoldError> {
        let prepared = self.prepare(&req)?;
        let mut staging = Staging::create(&prepared.parent, &req.brick).map_err(|e| {
            ScaffoldError::FailedInProgress {
                staging_removed: true,
                message: format!(
                    "cannot create a staging folder in {}: {e}",
                    prepared.parent.display()
                ),
            }
        })?;
        if let Err(message) = self
            .fill(&mut staging, &prepared.plan, &prepared.applied)
            .await
        {
            return Err(ScaffoldError::FailedInProgress {
                staging_removed: staging.remove(),
                message,
            });
        }
        match staging.commit(&prepared.destination) {
            Ok(()) => Ok(prepared.destination),
            Err((staging, e)) => Err(ScaffoldError::FailedInProgress {
                staging_removed: staging.remove(),
                message: format!("moving into {}: {e}", prepared.destination.display()),
            }),
        }
    }
}
