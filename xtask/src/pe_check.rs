//! What a Windows executable says of itself, read with MinGW's `objdump -p`:
//! its subsystem (a GUI program opens no console window on a double-click)
//! the types of its resources (the icon Explorer shows, the version
//! information of its properties) and the libraries it loads.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, Result, bail};

/// Resource type ids (`winuser.h`).
const RT_ICON: u32 = 3;
const RT_GROUP_ICON: u32 = 14;
const RT_VERSION: u32 = 16;

/// The facts `objdump -p` gives of one executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeFacts {
    /// The subsystem's name as objdump prints it (`Windows GUI`).
    pub subsystem: String,
    /// The top-level resource types.
    pub resource_types: BTreeSet<u32>,
    /// The libraries its import table names, in lower case.
    pub imports: BTreeSet<String>,
}

impl PeFacts {
    /// What a double-clickable `cocode.exe` lacks; empty when nothing.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.subsystem != "Windows GUI" {
            problems.push(format!(
                "the subsystem is {:?}, not Windows GUI: a console window would open behind the app",
                self.subsystem
            ));
        }
        for (kind, name) in [
            (RT_ICON, "icon"),
            (RT_GROUP_ICON, "icon group"),
            (RT_VERSION, "version information"),
        ] {
            if !self.resource_types.contains(&kind) {
                problems.push(format!("it holds no {name} resource"));
            }
        }
        problems
    }

    /// One line for people.
    pub fn describe(&self) -> String {
        format!(
            "subsystem {}, resource types {:?}",
            self.subsystem, self.resource_types
        )
    }
}

/// Runs MinGW's objdump on `exe`.
pub fn inspect(exe: &Path) -> Result<PeFacts> {
    let out = Command::new("x86_64-w64-mingw32-objdump")
        .arg("-p")
        .arg(exe)
        .output()
        .context("x86_64-w64-mingw32-objdump (install binutils-mingw-w64-x86-64)")?;
    if !out.status.success() {
        bail!(
            "objdump -p {}: {}",
            exe.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(parse(&String::from_utf8_lossy(&out.stdout)))
}

/// Reads `objdump -p` output: the `Subsystem` line, and in the `.rsrc`
/// dump the entries one level below the type table (deeper entries are
/// names and languages).
pub fn parse(text: &str) -> PeFacts {
    let subsystem = text
        .lines()
        .find(|l| l.starts_with("Subsystem"))
        .and_then(|l| l.split_once('(')?.1.split_once(')'))
        .map(|(name, _)| name.to_owned())
        .unwrap_or_default();
    let mut resource_types = BTreeSet::new();
    let mut type_depth = None;
    for line in text
        .lines()
        .skip_while(|l| !l.starts_with("The .rsrc Resource Directory section"))
    {
        // "010   Entry: ID: 0x000003, …": an offset, then the depth in spaces.
        let Some((_, rest)) = line.split_once(' ') else {
            continue;
        };
        let depth = rest.len() - rest.trim_start().len();
        let item = rest.trim_start();
        if item.starts_with("Type Table") {
            type_depth = Some(depth);
        } else if let Some(id) = item.strip_prefix("Entry: ID: 0x")
            && type_depth.is_some_and(|d| depth == d + 1)
            && let Some(hex) = id.split(',').next()
            && let Ok(id) = u32::from_str_radix(hex, 16)
        {
            resource_types.insert(id);
        }
    }
    let imports = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("DLL Name:"))
        .map(|name| name.trim().to_ascii_lowercase())
        .collect();
    PeFacts {
        subsystem,
        resource_types,
        imports,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// The parts of `objdump -p` that matter, as MinGW's binutils print
    /// them for the cross-built `cocode.exe`.
    const GUI_WITH_RESOURCES: &str = "\
MajorSubsystemVersion\t5
Subsystem\t\t00000002\t(Windows GUI)

The Import Tables (interpreted .idata section contents)
 vma:            Hint    Time      Forward  DLL       First
                 Table   Stamp     Chain    Name      Thunk
 04652000\t04652118 00000000 00000000 04658c5c 04652d08

\tDLL Name: KERNEL32.dll
\tvma:  Hint/Ord Member-Name Bound-To
\t4654c48\t  254  CreateFileW

 04652014\t04652300 00000000 00000000 04658d10 04652ef0

\tDLL Name: api-ms-win-core-synch-l1-2-0.dll
\tvma:  Hint/Ord Member-Name Bound-To
\t4654c60\t    0  WaitOnAddress
Entry 2 0000000004646000 00005218 Resource Directory [.rsrc]

The .rsrc Resource Directory section:
000  Type Table: Char: 0, Time: 00000000, Ver: 0/0, Num Names: 0, IDs: 3
010   Entry: ID: 0x000003, Value: 0x80000028
028    Name Table: Char: 0, Time: 00000000, Ver: 0/0, Num Names: 0, IDs: 6
038     Entry: ID: 0x000001, Value: 0x80000068
068      Language Table: Char: 0, Time: 00000000, Ver: 0/0, Num Names: 0, IDs: 1
078       Entry: ID: 0x000409, Value: 0x000158
018   Entry: ID: 0x00000e, Value: 0x800000f8
108     Entry: ID: 0x000001, Value: 0x80000110
120       Entry: ID: 0x000409, Value: 0x0001b8
020   Entry: ID: 0x000010, Value: 0x80000128
138     Entry: ID: 0x000001, Value: 0x80000140
150       Entry: ID: 0x000409, Value: 0x0001c8
";

    #[test]
    fn a_gui_program_with_its_icon_and_version_has_no_problem() {
        let facts = parse(GUI_WITH_RESOURCES);
        assert_eq!(
            facts,
            PeFacts {
                subsystem: "Windows GUI".to_owned(),
                resource_types: [RT_ICON, RT_GROUP_ICON, RT_VERSION].into(),
                imports: [
                    "api-ms-win-core-synch-l1-2-0.dll".to_owned(),
                    "kernel32.dll".to_owned()
                ]
                .into(),
            }
        );
        assert_eq!(facts.problems(), Vec::<String>::new());
    }

    #[test]
    fn a_console_program_without_resources_is_named_for_each_lack() {
        let console = "Subsystem\t\t00000003\t(Windows CUI)\n";
        assert_eq!(
            parse(console).problems(),
            [
                "the subsystem is \"Windows CUI\", not Windows GUI: a console window would open behind the app",
                "it holds no icon resource",
                "it holds no icon group resource",
                "it holds no version information resource",
            ]
        );
        // Only the icon group missing: found by its own id.
        let without_group = GUI_WITH_RESOURCES.replace("0x00000e", "0x000018");
        assert_eq!(
            parse(&without_group).problems(),
            ["it holds no icon group resource"]
        );
    }
}
