//! The reading tools: the workspace's status, file listings, reads and
//! searches.

use std::sync::{Arc, Mutex, PoisonError};

use cocode_core::WorkspaceErrorCode;
use cocode_core::gate::EditLockRegistry;
use cocode_core::path::NormalizedPath;
use cocode_tool_protocol::args::{ListFilesArgs, ReadFileArgs, SearchArgs};
use cocode_tool_protocol::catalog::{self, SOURCE_LIMIT_BYTES};
use cocode_tool_protocol::{ToolError, ToolOutput};

use serde_json::{Value, json};

// Tests build it with its parent under `cfg(test)`, where the lint is quiet.
#[cfg_attr(
    not(test),
    expect(
        clippy::wildcard_imports,
        reason = "a part of its parent's impl, cut out of one file: it names what the parent names"
    )
)]
use super::*;

impl WorkspaceTools {
    pub(super) fn status(&self) -> Result<ToolOutput, ToolError> {
        let root = self.root();
        let projects: Vec<Value> = cocode_toolchain::verify::detect(root, &[])
            .into_iter()
            .map(|p| {
                let rel = p
                    .dir
                    .strip_prefix(root)
                    .map(|r| r.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_default();
                let kind = match p.kind {
                    cocode_toolchain::verify::ProjectKind::Cargo => "cargo",
                    cocode_toolchain::verify::ProjectKind::Python => "python",
                    cocode_toolchain::verify::ProjectKind::Node => "node",
                    cocode_toolchain::verify::ProjectKind::Dart => "dart",
                    cocode_toolchain::verify::ProjectKind::Configured => "configured",
                };
                let test = cocode_toolchain::verify::test_command(&p).unwrap_or_default();
                json!({"kind": kind, "path": if rel.is_empty() { ".".to_owned() } else { rel }, "testCommand": test})
            })
            .collect();
        let locked: Vec<String> = self
            .leases
            .leases()
            .into_iter()
            .map(|(p, _)| p.as_str().to_owned())
            .collect();
        let held = self.tasks.held_paths();
        let recovery: Vec<String> = self
            .workspace
            .gate
            .blocked_paths()
            .into_iter()
            .map(|(p, _)| p.as_str().to_owned())
            .collect();
        let name = root
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        ToolOutput::json(&json!({
            "root": name, "projects": projects, "heldPaths": held, "lockedPaths": locked,
            "recoveryPendingPaths": recovery, "history": "recorded"
        }))
    }

    /// Every file under `base` (default: the workspace), gitignore-aware,
    /// without `.git/` and `.cocode/`, sorted: the whole tree at once, for
    /// a search (`listFiles` walks only as far as its page, see
    /// [`listing::LazyListing`]).
    #[tracing::instrument(level = "debug", skip_all, name = "tools.walk_files")]
    pub(super) fn walk_files(
        &self,
        base: Option<&NormalizedPath>,
    ) -> Result<Vec<String>, ToolError> {
        let dir = self.listed_folder(base)?;
        let rules = cocode_workspace::IgnoreFilter::with_parents_of(&dir);
        // Folders are listed on every core, as ripgrep lists them; the
        // order is made by the sort at the end.
        let walker = ignore::WalkBuilder::new(&dir)
            .standard_filters(false)
            .follow_links(false)
            .filter_entry(move |e| {
                let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                e.depth() == 0
                    || !((is_dir && crate::host::files::hidden_dir(e.file_name()))
                        || rules.ignores(e.path(), is_dir))
            })
            .build_parallel();
        let found = Mutex::new(Vec::new());
        let root = self.root();
        walker.run(|| {
            let found = &found;
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return ignore::WalkState::Continue;
                };
                if entry.file_type().is_some_and(|t| t.is_file())
                    && let Ok(rel) = entry.path().strip_prefix(root)
                {
                    let file = rel.to_string_lossy().replace('\\', "/");
                    found
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(file);
                }
                ignore::WalkState::Continue
            })
        });
        let mut files = found.into_inner().unwrap_or_else(PoisonError::into_inner);
        files.sort();
        Ok(files)
    }

    /// The folder a listing walks: the workspace, or a folder given by the
    /// agent, resolved like a read (its real path must be inside the
    /// workspace and outside `.cocode/`).
    fn listed_folder(
        &self,
        base: Option<&NormalizedPath>,
    ) -> Result<std::path::PathBuf, ToolError> {
        match base {
            None => Ok(self.root().to_path_buf()),
            Some(p) => self.real_folder("list", p),
        }
    }

    /// The real path of a folder the agent names, resolved like a read.
    pub(super) fn real_folder(
        &self,
        operation: &'static str,
        path: &NormalizedPath,
    ) -> Result<std::path::PathBuf, ToolError> {
        let resolved = self
            .workspace
            .gate
            .policy()
            .resolve_read(operation, path)
            .map_err(gate_error)?
            .ok_or_else(|| {
                ws_error(
                    WorkspaceErrorCode::FileNotFound,
                    operation,
                    path.as_str(),
                    "no such folder",
                )
            })?;
        Ok(resolved
            .path
            .segments()
            .fold(self.root().to_path_buf(), |d, s| d.join(s)))
    }

    /// `listFiles`: the first page walks the tree in path order as far as
    /// that page needs and keeps the walk; a cursor goes on with the same
    /// walk, so no file repeats and none listed vanishes between pages.
    #[tracing::instrument(level = "debug", skip_all, name = "tools.list_files")]
    pub(super) fn list(&self, args: &ListFilesArgs) -> Result<ToolOutput, ToolError> {
        let limit =
            usize::try_from(args.limit.unwrap_or(500).min(catalog::LIST_PAGE_LIMIT)).unwrap_or(500);
        let (snapshot, files, start) = if let Some(cursor) = &args.cursor {
            self.listings.page(cursor).ok_or_else(|| {
                ToolError::handler(
                    "TOOL_VALIDATION_FAILED",
                    "unknown or expired cursor; list again without one",
                    false,
                )
            })?
        } else {
            let base = match args.path.as_deref() {
                Some(p) if p != "." => Some(self.normalize(p)?),
                _ => None,
            };
            let dir = self.listed_folder(base.as_ref())?;
            let files = Arc::new(Mutex::new(listing::LazyListing::new(self.root(), &dir)));
            (self.listings.keep(Arc::clone(&files)), files, 0)
        };
        let mut listing = files.lock().unwrap_or_else(PoisonError::into_inner);
        let (paths, more) = listing.page(start, limit);
        // Sizes as they are when the page is served (0 for a file gone
        // since the listing).
        let page: Vec<Value> = paths
            .iter()
            .map(|path| {
                let size = std::fs::symlink_metadata(self.root().join(path)).map_or(0, |m| m.len());
                json!({"path": path, "size": size})
            })
            .collect();
        let next = start + page.len();
        let next_cursor = more.then(|| format!("{snapshot}:{next}"));
        ToolOutput::json(&json!({"files": page, "nextCursor": next_cursor}))
    }

    pub(super) fn read(&self, args: &ReadFileArgs) -> Result<ToolOutput, ToolError> {
        let path = self.normalize(&args.path)?;
        // The editor's unsaved text wins over the disk (ACP's
        // `fs/read_text_file` promises it too); its revision is that of the
        // text returned. The path passes the same policy either way.
        let unsaved = self.documents.unsaved_text(&path);
        let bytes = match &unsaved {
            Some(text) => {
                self.workspace
                    .gate
                    .policy()
                    .resolve_read("read", &path)
                    .map_err(gate_error)?;
                text.clone().into_bytes()
            }
            None => self.read_file("read", &path)?,
        };
        if is_binary(&bytes) {
            return Err(ws_error(
                WorkspaceErrorCode::BinaryFile,
                "read",
                path.as_str(),
                "binary or non-UTF-8 file",
            ));
        }
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let total = lines.len();
        let start = args
            .start_line
            .map_or(1, |n| usize::try_from(n).unwrap_or(usize::MAX));
        let end = args
            .end_line
            .map_or(total, |n| usize::try_from(n).unwrap_or(usize::MAX))
            .min(total);
        let ranged = args.start_line.is_some() || args.end_line.is_some();
        if !ranged && bytes.len() > SOURCE_LIMIT_BYTES {
            return Err(ws_error(
                WorkspaceErrorCode::SourceLimit,
                "read",
                path.as_str(),
                format!("the file has {} bytes; read it by line range", bytes.len()),
            ));
        }
        let content: String = if start > end || start > total {
            String::new()
        } else {
            lines[start - 1..end].concat()
        };
        if content.len() > SOURCE_LIMIT_BYTES {
            return Err(ws_error(
                WorkspaceErrorCode::SourceLimit,
                "read",
                path.as_str(),
                "the range is larger than the source limit",
            ));
        }
        let mut result = json!({
            "path": path.as_str(), "content": content, "revision": revision_of(&bytes),
            "startLine": start, "endLine": end.max(start.saturating_sub(1)), "totalLines": total
        });
        if unsaved.is_some() {
            result["unsaved"] = Value::Bool(true);
        }
        ToolOutput::json(&result)
    }

    /// `search`: one walk of the tree (or of `path`), each file read
    /// through the safe read path.
    pub(super) fn search(&self, args: &SearchArgs) -> Result<ToolOutput, ToolError> {
        let query = args.query.as_str();
        let pattern = if args.regex == Some(true) {
            query.to_owned()
        } else {
            regex::escape(query)
        };
        // ripgrep's matcher and searcher: a match never spans lines. Binary
        // files (the one rule, below) are left out before the search.
        let line_matcher = grep_regex::RegexMatcherBuilder::new()
            .line_terminator(Some(b'\n'))
            .build(&pattern)
            .map_err(|e| {
                ToolError::handler(
                    "TOOL_VALIDATION_FAILED",
                    format!("invalid regular expression: {e}"),
                    false,
                )
            })?;
        let mut searcher = grep_searcher::SearcherBuilder::new()
            .line_number(true)
            .build();
        let max = args
            .max_results
            .unwrap_or(100)
            .min(catalog::SEARCH_RESULT_LIMIT);
        let base = match args.path.as_deref() {
            Some(p) if p != "." => Some(self.normalize(p)?),
            _ => None,
        };
        let files: Vec<String> = self.walk_files(base.as_ref())?;
        let mut matches = Vec::new();
        let mut truncated = false;
        for rel in files {
            let Ok(path) = self.normalize(&rel) else {
                continue;
            };
            let Ok(Some(bytes)) = self.workspace.gate.read_file("search", &path) else {
                continue;
            };
            if bytes.len() > SOURCE_LIMIT_BYTES || is_binary(&bytes) {
                continue;
            }
            let outcome = searcher.search_slice(
                &line_matcher,
                &bytes,
                grep_searcher::sinks::UTF8(|line_number, line| {
                    if matches.len() as u64 >= max {
                        truncated = true;
                        return Ok(false);
                    }
                    let preview: String = line.trim().chars().take(200).collect();
                    matches.push(json!({"path": rel, "line": line_number, "preview": preview}));
                    Ok(true)
                }),
            );
            if let Err(e) = outcome {
                tracing::warn!(path = %rel, "search skipped a file: {e}");
            }
            if truncated {
                break;
            }
        }
        ToolOutput::json(&json!({"matches": matches, "truncated": truncated}))
    }
}
