//! The open documents of a window, shared with the host: agents read unsaved
//! text through [`TextDocumentSource`], and language servers publish
//! semantic tokens through [`SemanticTokenSink`].

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock};

use cocode_core::path::NormalizedPath;
use cocode_core::services::{SemanticToken, SemanticTokenSink, TextDocumentSource};

use crate::document::Document;

#[derive(Debug)]
struct Entry {
    doc: Document,
    /// Tokens for `doc`'s version at the time they were published.
    /// Sorted by line, shared with the frames that draw them.
    tokens: Option<(i32, Arc<[SemanticToken]>)>,
}

/// The open documents, by workspace path.
#[derive(Debug, Default)]
pub struct OpenDocuments {
    entries: RwLock<BTreeMap<NormalizedPath, Entry>>,
}

impl OpenDocuments {
    pub fn new() -> Self {
        Self::default()
    }

    /// Opens `path` with its text on disk; `false` (and nothing changes)
    /// when it is already open.
    pub fn open(&self, path: NormalizedPath, text: &str) -> bool {
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        if entries.contains_key(&path) {
            return false;
        }
        entries.insert(
            path,
            Entry {
                doc: Document::from_text(text),
                tokens: None,
            },
        );
        true
    }

    /// Opens `path` with a document built by the caller (read off the UI
    /// thread); `false` (and nothing changes) when it is already open.
    pub fn open_document(&self, path: NormalizedPath, doc: Document) -> bool {
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        if entries.contains_key(&path) {
            return false;
        }
        entries.insert(path, Entry { doc, tokens: None });
        true
    }

    /// The document at `from` now lives at `to` (its file was renamed);
    /// `false` when `from` is not open or `to` already is.
    pub fn rename(&self, from: &NormalizedPath, to: NormalizedPath) -> bool {
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        if entries.contains_key(&to) {
            return false;
        }
        match entries.remove(from) {
            Some(entry) => {
                entries.insert(to, entry);
                true
            }
            None => false,
        }
    }

    /// Whether the open document at `path` differs from disk.
    pub fn has_unsaved_changes(&self, path: &NormalizedPath) -> bool {
        self.has_unsaved(path)
    }

    pub fn close(&self, path: &NormalizedPath) -> Option<Document> {
        self.entries
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(path)
            .map(|e| e.doc)
    }

    pub fn is_open(&self, path: &NormalizedPath) -> bool {
        self.entries
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(path)
    }

    /// Runs `f` on an open document (an edit, undo, a save's bookkeeping).
    /// Tokens published for an older version stop being offered.
    pub fn with_document<R>(
        &self,
        path: &NormalizedPath,
        f: impl FnOnce(&mut Document) -> R,
    ) -> Option<R> {
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        let entry = entries.get_mut(path)?;
        let result = f(&mut entry.doc);
        if entry
            .tokens
            .as_ref()
            .is_some_and(|(v, _)| *v != entry.doc.version())
        {
            entry.tokens = None;
        }
        Some(result)
    }

    /// The paths whose text differs from disk.
    pub fn dirty_paths(&self) -> Vec<NormalizedPath> {
        self.entries
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(_, e)| e.doc.is_dirty())
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// The semantic tokens of the document's current version, if a server
    /// published them, in line order (shared, not copied).
    pub fn tokens(&self, path: &NormalizedPath) -> Option<Arc<[SemanticToken]>> {
        let entries = self.entries.read().unwrap_or_else(PoisonError::into_inner);
        let entry = entries.get(path)?;
        match &entry.tokens {
            Some((version, tokens)) if *version == entry.doc.version() => Some(Arc::clone(tokens)),
            _ => None,
        }
    }
}

impl TextDocumentSource for OpenDocuments {
    /// The editor's text when it differs from the file on disk.
    fn unsaved_text(&self, path: &NormalizedPath) -> Option<String> {
        let entries = self.entries.read().unwrap_or_else(PoisonError::into_inner);
        entries
            .get(path)
            .filter(|e| e.doc.is_dirty())
            .map(|e| e.doc.text())
    }

    fn has_unsaved(&self, path: &NormalizedPath) -> bool {
        self.entries
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(path)
            .is_some_and(|e| e.doc.is_dirty())
    }
}

impl SemanticTokenSink for OpenDocuments {
    /// Keeps tokens computed for the document's current version; tokens for
    /// another version (the person typed meanwhile) or a closed document are
    /// dropped, since their positions no longer fit the text.
    fn publish(&self, path: &NormalizedPath, version: i32, mut tokens: Vec<SemanticToken>) {
        tokens.sort_by_key(|t| (t.line, t.start_char));
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = entries.get_mut(path)
            && entry.doc.version() == version
        {
            entry.tokens = Some((version, tokens.into()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change::{Change, ChangeSet};
    use crate::document::EditKind;
    use pretty_assertions::assert_eq;

    fn path(s: &str) -> NormalizedPath {
        serde_json::from_value(serde_json::Value::from(s)).unwrap()
    }

    fn token(line: u32) -> SemanticToken {
        SemanticToken {
            line,
            start_char: 0,
            length: 3,
            token_type: "keyword".into(),
            modifiers: vec![],
        }
    }

    #[test]
    fn only_text_that_differs_from_disk_is_offered_to_agents() {
        let docs = OpenDocuments::new();
        let p = path("src/lib.rs");
        assert!(docs.open(p.clone(), "fn a() {}\n"));
        assert!(!docs.open(p.clone(), "other"));
        assert_eq!(docs.unsaved_text(&p), None);
        docs.with_document(&p, |d| {
            d.apply(
                &ChangeSet::single(Change::insert(0, "pub ")).unwrap(),
                EditKind::Other,
            )
        })
        .unwrap()
        .unwrap();
        assert_eq!(docs.unsaved_text(&p).as_deref(), Some("pub fn a() {}\n"));
        assert!(docs.has_unsaved(&p));
        assert_eq!(docs.dirty_paths(), vec![p.clone()]);
        docs.with_document(&p, Document::mark_saved).unwrap();
        assert_eq!(docs.unsaved_text(&p), None);
        assert!(!docs.has_unsaved(&p));
        assert_eq!(docs.unsaved_text(&path("other.rs")), None);
        let moved = path("src/moved.rs");
        assert!(docs.rename(&p, moved.clone()));
        assert!(!docs.is_open(&p));
        assert!(docs.is_open(&moved));
        assert!(!docs.rename(&p, moved.clone()));
        assert!(docs.close(&moved).is_some());
        assert!(!docs.is_open(&moved));
    }

    #[test]
    fn tokens_are_kept_only_for_the_current_version() {
        let docs = OpenDocuments::new();
        let p = path("a.rs");
        docs.open(p.clone(), "fn x() {}\n");
        docs.publish(&p, 0, vec![token(0)]);
        assert_eq!(docs.tokens(&p), Some(vec![token(0)].into()));
        docs.with_document(&p, |d| {
            d.apply(
                &ChangeSet::single(Change::insert(0, "\n")).unwrap(),
                EditKind::Other,
            )
        });
        assert_eq!(docs.tokens(&p), None);
        // Late tokens for the old version are dropped; current ones kept.
        docs.publish(&p, 0, vec![token(0)]);
        assert_eq!(docs.tokens(&p), None);
        docs.publish(&p, 1, vec![token(1)]);
        assert_eq!(docs.tokens(&p), Some(vec![token(1)].into()));
        docs.publish(&path("closed.rs"), 0, vec![token(0)]);
        assert_eq!(docs.tokens(&path("closed.rs")), None);
        // Kept in line order, whatever order the server sent.
        docs.publish(&p, 1, vec![token(7), token(2)]);
        assert_eq!(docs.tokens(&p), Some(vec![token(2), token(7)].into()));
    }
}
