//! The policy proxy's host rules: who may be reached, judged on the
//! normalized name and again on every address it resolves to.
//!
//! Names are lower-cased, lose a trailing dot and go through IDNA to ASCII.
//! Entries are exact hosts or `*.suffix` (subdomains only, not the apex);
//! an entry without a port allows 443 and 80. IP literals, `localhost`,
//! loopback, link-local, private and other special addresses are refused
//! unless that exact host is listed — no SSRF into the person's machine or
//! LAN, also not through a public name that resolves there (DNS rebinding).

use std::net::IpAddr;

use cocode_core::workspace::HostPattern;

/// Why a host was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostRefused {
    #[error("{0} is not a valid host name")]
    Invalid(String),
    #[error("{host}:{port} is not in the allowed hosts")]
    NotListed { host: String, port: u16 },
    #[error("{host} resolves to {addr}, a local or private address that is not listed")]
    PrivateAddress { host: String, addr: IpAddr },
}

/// The allowed hosts of a workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostPolicy {
    patterns: Vec<HostPattern>,
}

/// Lower-case, no trailing dot, no IPv6 brackets, IDNA ASCII.
pub fn normalize_host(raw: &str) -> Result<String, HostRefused> {
    let trimmed = raw.trim();
    let unbracketed = trimmed
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(trimmed);
    let no_dot = unbracketed.strip_suffix('.').unwrap_or(unbracketed);
    if no_dot.is_empty() {
        return Err(HostRefused::Invalid(raw.to_owned()));
    }
    if let Ok(ip) = no_dot.parse::<IpAddr>() {
        return Ok(ip.to_string());
    }
    let ascii = idna::domain_to_ascii(no_dot).map_err(|_| HostRefused::Invalid(raw.to_owned()))?;
    if ascii.is_empty() || ascii.contains(['/', '@', ' ', ':']) {
        return Err(HostRefused::Invalid(raw.to_owned()));
    }
    Ok(ascii)
}

/// Addresses a child may reach only when listed by their exact literal.
pub fn is_special_address(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                // 100.64.0.0/10 carrier-grade NAT
                || (v4.octets()[0] == 100 && (v4.octets()[1] & 0xc0) == 64)
        }
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                // fc00::/7 unique local, fe80::/10 link-local
                || (v6.segments()[0] & 0xfe00) == 0xfc00
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6.to_ipv4_mapped().is_some_and(|v4| is_special_address(IpAddr::V4(v4)))
        }
    }
}

impl HostPolicy {
    pub fn new(patterns: Vec<HostPattern>) -> Self {
        Self { patterns }
    }

    /// This policy with `extra` patterns added (one launch's own hosts).
    #[must_use]
    pub fn with_extra(&self, extra: &[HostPattern]) -> Self {
        let mut patterns = self.patterns.clone();
        patterns.extend(extra.iter().cloned());
        Self { patterns }
    }

    fn port_ok(pattern: &HostPattern, port: u16) -> bool {
        match pattern.port() {
            Some(p) => p == port,
            None => port == 443 || port == 80,
        }
    }

    fn exact(&self, host: &str, port: u16) -> bool {
        self.patterns
            .iter()
            .any(|p| !p.is_wildcard() && p.host() == host && Self::port_ok(p, port))
    }

    /// Judges a requested `host:port` by name. Returns the normalized host.
    pub fn judge(&self, raw_host: &str, port: u16) -> Result<String, HostRefused> {
        let host = normalize_host(raw_host)?;
        let literal_or_local =
            host.parse::<IpAddr>().is_ok() || host == "localhost" || host.ends_with(".localhost");
        let allowed = if literal_or_local {
            self.exact(&host, port)
        } else {
            self.exact(&host, port)
                || self.patterns.iter().any(|p| {
                    p.is_wildcard()
                        && host.len() > p.host().len()
                        && host.ends_with(p.host())
                        && host.as_bytes()[host.len() - p.host().len() - 1] == b'.'
                        && Self::port_ok(p, port)
                })
        };
        if allowed {
            Ok(host)
        } else {
            Err(HostRefused::NotListed { host, port })
        }
    }

    /// Judges one address an allowed host resolved to (at connect time).
    pub fn judge_address(&self, host: &str, port: u16, addr: IpAddr) -> Result<(), HostRefused> {
        if !is_special_address(addr)
            || self.exact(&addr.to_string(), port)
            || (host == "localhost" && self.exact(host, port))
        {
            Ok(())
        } else {
            Err(HostRefused::PrivateAddress {
                host: host.to_owned(),
                addr,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn policy(entries: &[&str]) -> HostPolicy {
        HostPolicy::new(
            entries
                .iter()
                .map(|e| HostPattern::parse(e).unwrap())
                .collect(),
        )
    }

    #[test]
    fn names_normalize_before_matching() {
        let p = policy(&["crates.io", "*.github.com", "xn--bj0bj06e.kr"]);
        assert_eq!(p.judge("Crates.IO.", 443), Ok("crates.io".to_owned()));
        assert_eq!(
            p.judge("API.GitHub.com", 443),
            Ok("api.github.com".to_owned())
        );
        assert_eq!(p.judge("한글.kr", 443), Ok("xn--bj0bj06e.kr".to_owned()));
        assert!(
            matches!(
                p.judge("github.com", 443),
                Err(HostRefused::NotListed { .. })
            ),
            "wildcards are subdomains only"
        );
        assert!(matches!(
            p.judge("evilgithub.com", 443),
            Err(HostRefused::NotListed { .. })
        ));
        assert!(matches!(
            p.judge("crates.io.evil.com", 443),
            Err(HostRefused::NotListed { .. })
        ));
        assert!(matches!(
            p.judge("bad host", 443),
            Err(HostRefused::Invalid(_))
        ));
    }

    #[test]
    fn ports_default_to_https_and_http() {
        let p = policy(&["crates.io", "registry.local.test:8443"]);
        assert!(p.judge("crates.io", 80).is_ok());
        assert!(p.judge("crates.io", 22).is_err());
        assert!(p.judge("registry.local.test", 8443).is_ok());
        assert!(p.judge("registry.local.test", 443).is_err());
    }

    #[test]
    fn ip_literals_and_local_names_need_an_exact_entry() {
        let p = policy(&["*.example.com"]);
        for host in [
            "127.0.0.1",
            "localhost",
            "10.0.0.8",
            "[::1]",
            "169.254.169.254",
            "0.0.0.0",
        ] {
            assert!(p.judge(host, 80).is_err(), "{host}");
        }
        let listed = policy(&["127.0.0.1:8080"]);
        assert_eq!(listed.judge("127.0.0.1", 8080), Ok("127.0.0.1".to_owned()));
        assert!(listed.judge("127.0.0.1", 8081).is_err());
    }

    #[test]
    fn an_allowed_name_resolving_to_a_private_address_is_refused() {
        let p = policy(&["*.example.com", "127.0.0.1:8080"]);
        let rebinding = p.judge_address("a.example.com", 443, "127.0.0.1".parse().unwrap());
        assert!(matches!(rebinding, Err(HostRefused::PrivateAddress { .. })));
        assert!(
            p.judge_address("a.example.com", 443, "192.168.1.2".parse().unwrap())
                .is_err()
        );
        assert!(
            p.judge_address("a.example.com", 443, "::ffff:10.0.0.1".parse().unwrap())
                .is_err()
        );
        assert!(
            p.judge_address("a.example.com", 443, "93.184.215.14".parse().unwrap())
                .is_ok()
        );
        assert!(
            p.judge_address("127.0.0.1", 8080, "127.0.0.1".parse().unwrap())
                .is_ok()
        );
    }
}
