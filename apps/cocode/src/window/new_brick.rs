//! The "New Workspace from Brick" dialog's model: the chosen brick, where
//! the workspace goes, the variables, and the live check of the request.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cocode_core::services::{BrickInfo, BrickVariable, ScaffoldRequest};

/// One change the person made in the dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrickDialogChange {
    Brick(usize),
    Parent(String),
    Name(String),
    Value { name: String, value: String },
}

/// The dialog's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewFromBrickDialog {
    /// `None` until the brick worker has listed them.
    pub bricks: Option<Vec<BrickInfo>>,
    /// The person's bricks that did not load.
    pub problems: Vec<String>,
    pub selected: usize,
    /// The folder the new workspace goes in.
    pub parent: String,
    /// The new workspace's folder name.
    pub name: String,
    /// Values the person set; a variable left alone (or emptied) takes its
    /// default.
    pub values: BTreeMap<String, String>,
    /// Numbers the checks; only the latest answer counts.
    pub seq: u64,
    /// The check of the request as it is now; `None` while it runs.
    pub check: Option<Result<(), String>>,
    pub creating: bool,
    pub error: Option<String>,
}

impl NewFromBrickDialog {
    pub fn new(parent: &Path) -> Self {
        Self {
            bricks: None,
            problems: Vec::new(),
            selected: 0,
            parent: parent.display().to_string(),
            name: String::new(),
            values: BTreeMap::new(),
            seq: 0,
            check: None,
            creating: false,
            error: None,
        }
    }

    pub fn brick(&self) -> Option<&BrickInfo> {
        self.bricks.as_ref()?.get(self.selected)
    }

    pub fn destination(&self) -> PathBuf {
        PathBuf::from(self.parent.trim()).join(self.name.trim())
    }

    /// The default of `var` for the folder name typed so far.
    pub fn default_of(&self, var: &BrickVariable) -> Option<String> {
        cocode_bricks::render::default_value(var, self.name.trim())
            .ok()
            .flatten()
    }

    /// What the field of `var` shows: the person's value, else the default.
    pub fn value_of(&self, var: &BrickVariable) -> String {
        self.values
            .get(&var.name)
            .filter(|v| !v.is_empty())
            .cloned()
            .or_else(|| self.default_of(var))
            .unwrap_or_default()
    }

    /// The request as it stands; `None` until a brick and a name are there.
    pub fn request(&self) -> Option<ScaffoldRequest> {
        let brick = self.brick()?;
        if self.name.trim().is_empty() {
            return None;
        }
        let variables = brick
            .variables
            .iter()
            .filter_map(|v| {
                let value = self.values.get(&v.name).filter(|x| !x.is_empty())?;
                Some((v.name.clone(), value.clone()))
            })
            .collect();
        Some(ScaffoldRequest {
            brick: brick.name.clone(),
            destination: self.destination(),
            variables,
        })
    }

    /// Applies a change; the previous check no longer holds.
    pub fn apply(&mut self, change: BrickDialogChange) {
        match change {
            BrickDialogChange::Brick(i) => {
                if i != self.selected {
                    self.selected = i;
                    self.values.clear();
                }
            }
            BrickDialogChange::Parent(p) => self.parent = p,
            BrickDialogChange::Name(n) => self.name = n,
            BrickDialogChange::Value { name, value } => {
                self.values.insert(name, value);
            }
        }
        self.error = None;
    }

    /// Starts a new check: the request to send with its number, or the
    /// reason there is nothing to check yet.
    pub fn recheck(&mut self) -> Option<(u64, ScaffoldRequest)> {
        self.seq += 1;
        if let Some(request) = self.request() {
            self.check = None;
            return Some((self.seq, request));
        }
        self.check = Some(Err(if self.bricks.as_ref().is_some_and(Vec::is_empty) {
            "No bricks are available.".to_owned()
        } else {
            "Type a name for the new folder.".to_owned()
        }));
        None
    }

    /// A check's answer; an outdated one is ignored.
    pub fn on_checked(&mut self, seq: u64, result: Result<(), String>) {
        if seq == self.seq {
            self.check = Some(result);
        }
    }

    pub fn can_create(&self) -> bool {
        matches!(self.check, Some(Ok(()))) && !self.creating
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cocode_core::services::BrickVariableKind;
    use pretty_assertions::assert_eq;

    fn dialog() -> NewFromBrickDialog {
        let mut d = NewFromBrickDialog::new(Path::new("/home/me/src"));
        d.bricks = Some(vec![BrickInfo {
            name: "rust-lib".into(),
            description: "Rust library".into(),
            variables: vec![BrickVariable {
                name: "crate_name".into(),
                description: String::new(),
                kind: BrickVariableKind::String,
                default: Some("{{ folder_name | lower }}".into()),
                pattern: None,
                choices: vec![],
            }],
        }]);
        d
    }

    #[test]
    fn defaults_follow_the_folder_name_until_the_person_sets_a_value() {
        let mut d = dialog();
        assert_eq!(d.recheck(), None);
        assert_eq!(d.check, Some(Err("Type a name for the new folder.".into())));
        d.apply(BrickDialogChange::Name("My-Lib".into()));
        let var = d.brick().unwrap().variables[0].clone();
        assert_eq!(d.value_of(&var), "my-lib");
        let (seq, request) = d.recheck().unwrap();
        assert_eq!(
            request,
            ScaffoldRequest {
                brick: "rust-lib".into(),
                destination: PathBuf::from("/home/me/src/My-Lib"),
                variables: BTreeMap::new(),
            }
        );
        d.apply(BrickDialogChange::Value {
            name: "crate_name".into(),
            value: "mine".into(),
        });
        assert_eq!(d.value_of(&var), "mine");
        let (next, request) = d.recheck().unwrap();
        assert_eq!(
            request.variables,
            BTreeMap::from([("crate_name".into(), "mine".into())])
        );
        // The answer to the older check is ignored; the latest one counts.
        d.on_checked(seq, Ok(()));
        assert_eq!(d.check, None);
        assert!(!d.can_create());
        d.on_checked(next, Ok(()));
        assert!(d.can_create());
    }
}
