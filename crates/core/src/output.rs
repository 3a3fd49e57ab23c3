//! Bounded output capture: beyond the limit the oldest bytes go, cut on a
//! UTF-8 character boundary so the kept text never starts mid-character.

/// Keeps at most `limit` bytes of a child's output (the newest).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputBuffer {
    bytes: Vec<u8>,
    limit: Option<usize>,
    /// How many bytes were dropped from the start.
    trimmed: u64,
}

impl OutputBuffer {
    pub fn new(limit: Option<usize>) -> Self {
        Self {
            bytes: Vec::new(),
            limit,
            trimmed: 0,
        }
    }

    pub fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend_from_slice(chunk);
        let Some(limit) = self.limit else { return };
        if self.bytes.len() <= limit {
            return;
        }
        let mut cut = self.bytes.len() - limit;
        // Move forward past UTF-8 continuation bytes (10xxxxxx).
        while cut < self.bytes.len() && (self.bytes[cut] & 0b1100_0000) == 0b1000_0000 {
            cut += 1;
        }
        self.bytes.drain(..cut);
        self.trimmed += cut as u64;
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn trimmed(&self) -> u64 {
        self.trimmed
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_newest_bytes_stay_and_a_character_is_never_split() {
        let mut out = OutputBuffer::new(Some(7));
        out.push("ab".as_bytes());
        out.push("한글".as_bytes()); // 3 bytes each
        assert_eq!(
            (out.bytes(), out.trimmed()),
            ("ab한글".as_bytes().get(1..).unwrap_or_default(), 1)
        );
        out.push(b"xyz");
        // 10 bytes: cutting 3 would land inside the first Hangul syllable,
        // so 4 go.
        assert_eq!(String::from_utf8(out.bytes().to_vec()).unwrap(), "글xyz");
        assert_eq!(out.trimmed(), 1 + 4);
        let mut unlimited = OutputBuffer::new(None);
        unlimited.push(&[0u8; 10_000]);
        assert_eq!(unlimited.bytes().len(), 10_000);
    }
}
