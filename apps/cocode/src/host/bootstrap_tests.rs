use super::*;
use cocode_core::CONTRACTS;
use pretty_assertions::assert_eq;

/// Contract names registered in `source` (`register::<dyn Name>` calls), in order.
fn registrations_in(source: &str) -> Vec<String> {
    let code = source.split("#[cfg(test)]").next().unwrap_or(source);
    code.match_indices("register::<dyn ")
        .map(|(i, m)| {
            code[i + m.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

/// Every problem with the registrations, empty when complete.
fn completeness_problems(
    in_source: &[String],
    in_run: &[ContractId],
    unregistered: &[ContractId],
) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, name) in in_source.iter().enumerate() {
        if in_source[..i].contains(name) {
            problems.push(format!("{name} is registered twice"));
        }
        if !CONTRACTS.iter().any(|c| c.name() == name) {
            problems.push(format!("{name} is not a contract"));
        }
    }
    let mut source_ids: Vec<ContractId> = CONTRACTS
        .into_iter()
        .filter(|c| in_source.iter().any(|n| n == c.name()))
        .collect();
    source_ids.sort();
    let mut run_ids = in_run.to_vec();
    run_ids.sort();
    if source_ids != run_ids {
        problems.push(format!(
            "source registers {source_ids:?} but a run registers {run_ids:?}"
        ));
    }
    for contract in CONTRACTS {
        match (in_run.contains(&contract), unregistered.contains(&contract)) {
            (true, true) => problems.push(format!(
                "{contract} is registered and listed as unregistered"
            )),
            (false, false) => problems.push(format!("{contract} is in neither list")),
            _ => {}
        }
    }
    problems
}

#[test]
fn every_contract_is_registered_once_or_listed_as_unregistered() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let host = rt
        .block_on(crate::host::workspace_host::WorkspaceHost::open(
            dir.path(),
            crate::host::workspace_host::HostOptions {
                vault: Arc::new(cocode_toolchain::vault::SessionVault::default()),
                providers: cocode_agent::LlmProviderRegistry::with_presets().unwrap(),
                retry: cocode_agent::RetryPolicy::default(),
                limits: cocode_agent::LoopLimits::default(),
                documents: Arc::new(OpenDocuments::new()),
                lsp: None,
            },
        ))
        .unwrap();
    let in_source = registrations_in(include_str!("bootstrap.rs"));
    let problems = completeness_problems(
        &in_source,
        &host.contracts.registered(),
        &UNREGISTERED_CONTRACTS,
    );
    assert_eq!(problems, Vec::<String>::new());
    assert_eq!(host.contracts.missing(), UNREGISTERED_CONTRACTS.to_vec());
    let backends = host.contracts.get::<dyn AgentRuntime>().unwrap();
    assert_eq!(
        backends.keys(),
        vec![AgentBackendKind::BuiltIn, AgentBackendKind::Acp]
    );
}

#[test]
fn the_check_fails_for_a_double_registration() {
    let source = "fn bootstrap() { r.register::<dyn SnapshotStore>(a)?; r.register::<dyn SnapshotStore>(b)?; }";
    let in_source = registrations_in(source);
    assert_eq!(in_source, vec!["SnapshotStore", "SnapshotStore"]);
    let unregistered: Vec<_> = CONTRACTS
        .into_iter()
        .filter(|c| *c != ContractId::SnapshotStore)
        .collect();
    let problems = completeness_problems(&in_source, &[ContractId::SnapshotStore], &unregistered);
    assert_eq!(
        problems,
        vec!["SnapshotStore is registered twice".to_owned()]
    );
}

#[test]
fn the_check_fails_for_a_contract_in_neither_list() {
    let unregistered: Vec<_> = CONTRACTS
        .into_iter()
        .filter(|c| *c != ContractId::CredentialVault)
        .collect();
    let problems = completeness_problems(&[], &[], &unregistered);
    assert_eq!(
        problems,
        vec!["CredentialVault is in neither list".to_owned()]
    );
}

#[test]
fn the_check_fails_for_a_contract_in_both_lists_or_unknown_names() {
    let in_source =
        registrations_in("r.register::<dyn BrickEngine>(x); r.register::<dyn Teleporter>(y);");
    let problems = completeness_problems(&in_source, &[ContractId::BrickEngine], &CONTRACTS);
    assert_eq!(
        problems,
        vec![
            "Teleporter is not a contract".to_owned(),
            "BrickEngine is registered and listed as unregistered".to_owned()
        ]
    );
}

#[test]
fn the_check_fails_when_the_source_and_the_run_disagree() {
    let in_source = registrations_in("r.register::<dyn BrickEngine>(x);");
    let unregistered: Vec<_> = CONTRACTS
        .into_iter()
        .filter(|c| *c != ContractId::BrickEngine)
        .collect();
    let problems = completeness_problems(&in_source, &[], &unregistered);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].starts_with("source registers [BrickEngine] but a run registers []"));
}
