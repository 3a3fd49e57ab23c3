//! Values a person types into a form, checked, with the reason in words
//! when they cannot be used.

use cocode_core::workspace::HostPattern;

/// A host a person types, checked.
pub fn parse_host(text: &str) -> Result<HostPattern, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("type a host, such as api.example.com or *.example.com:443".to_owned());
    }
    HostPattern::parse(text).map_err(|_| {
        format!("“{text}” is not a host: write host, *.suffix, or either with :port, in ASCII")
    })
}
