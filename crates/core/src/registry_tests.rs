use super::*;
use crate::path::NormalizedPath;
use crate::services::ParseCheck;
use pretty_assertions::assert_eq;

struct NoUnsavedText;
impl TextDocumentSource for NoUnsavedText {
    fn unsaved_text(&self, _path: &NormalizedPath) -> Option<String> {
        None
    }
}

struct JsonLike(&'static [&'static str]);
impl FileFormatParser for JsonLike {
    fn extensions(&self) -> &[&'static str] {
        self.0
    }
    fn check(&self, content: &[u8]) -> ParseCheck {
        if content.starts_with(b"{") {
            ParseCheck::Ok
        } else {
            ParseCheck::Errors { count: 1 }
        }
    }
}

#[test]
fn the_contract_list_names_twelve_distinct_contracts() {
    let mut names: Vec<_> = CONTRACTS.iter().map(|c| c.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 12);
}

#[test]
fn a_contract_registers_once_and_is_found_by_type() {
    let mut reg = ContractRegistry::new();
    assert_eq!(reg.missing(), CONTRACTS.to_vec());
    reg.register::<dyn TextDocumentSource>(Arc::new(NoUnsavedText))
        .unwrap();
    assert_eq!(
        reg.register::<dyn TextDocumentSource>(Arc::new(NoUnsavedText)),
        Err(RegistryError::DuplicateContract(
            ContractId::TextDocumentSource
        ))
    );
    assert_eq!(reg.registered(), vec![ContractId::TextDocumentSource]);
    assert_eq!(reg.missing().len(), 11);
    assert!(!reg.missing().contains(&ContractId::TextDocumentSource));
    let source = reg.get::<dyn TextDocumentSource>().unwrap();
    assert_eq!(
        source.unsaved_text(&serde_json::from_str("\"a\"").unwrap()),
        None
    );
    assert_eq!(
        reg.get::<dyn SnapshotStore>().err(),
        Some(RegistryError::MissingContract(ContractId::SnapshotStore))
    );
}

#[test]
fn keyed_contracts_hold_their_keyed_registry() {
    let mut parsers = FileFormatParserRegistry::new();
    parsers
        .register(&(Arc::new(JsonLike(&["json", "ARB"])) as Arc<dyn FileFormatParser>))
        .unwrap();
    assert_eq!(
        parsers.register(&(Arc::new(JsonLike(&["yaml", "json"])) as Arc<dyn FileFormatParser>)),
        Err(RegistryError::DuplicateKey("json".into()))
    );
    assert_eq!(
        parsers.extensions(),
        vec!["arb".to_owned(), "json".to_owned()],
        "nothing half-registered"
    );
    assert_eq!(
        parsers
            .parser_for("l10n/app_en.ARB")
            .map(|p| p.check(b"{}")),
        Some(ParseCheck::Ok)
    );
    assert!(parsers.parser_for("Makefile").is_none());
    assert!(parsers.parser_for("a.toml").is_none());

    let mut reg = ContractRegistry::new();
    reg.register::<dyn FileFormatParser>(parsers).unwrap();
    assert_eq!(
        reg.get::<dyn FileFormatParser>()
            .unwrap()
            .extensions()
            .len(),
        2
    );
    let backends = AgentBackendRegistry::new();
    assert_eq!(
        backends.missing(),
        vec![AgentBackendKind::BuiltIn, AgentBackendKind::Acp]
    );
    reg.register::<dyn AgentRuntime>(backends).unwrap();
    assert_eq!(
        reg.registered(),
        vec![ContractId::AgentRuntime, ContractId::FileFormatParser]
    );
}

#[test]
fn keyed_registries_list_their_missing_keys() {
    let mut methods: VerificationMethodRegistry<dyn TextDocumentSource> = KeyedRegistry::new();
    assert_eq!(methods.missing(), VerificationMethod::ALL.to_vec());
    methods
        .register(VerificationMethod::Build, Arc::new(NoUnsavedText))
        .unwrap();
    assert_eq!(
        methods.register(VerificationMethod::Build, Arc::new(NoUnsavedText)),
        Err(RegistryError::DuplicateKey("Build".into()))
    );
    assert_eq!(methods.keys(), vec![VerificationMethod::Build]);
    assert_eq!(methods.missing().len(), 4);
    assert_eq!(
        SandboxProfileRegistry::new().missing(),
        SandboxProfileKind::ALL.to_vec()
    );
}
