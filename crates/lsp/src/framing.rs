//! The base protocol's framing: a `Content-Length` header, an empty line,
//! then that many bytes of JSON.

/// A frame larger than this is refused (a runaway or hostile server).
pub const MAX_FRAME: usize = 64 * 1024 * 1024;

/// Why the byte stream is not a valid sequence of frames.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("a message header has no Content-Length")]
    MissingLength,
    #[error("a message header is not readable: {0}")]
    BadHeader(String),
    #[error("a message of {0} bytes is larger than the limit of {MAX_FRAME}")]
    TooLarge(usize),
}

/// One message ready to write.
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Cuts a byte stream into message bodies, whatever the chunking.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
}

impl Decoder {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete body; `Ok(None)` until one has arrived. After an
    /// error the stream cannot be trusted and the connection ends.
    pub fn next_frame(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            if self.buf.len() > 8 * 1024 {
                return Err(FrameError::BadHeader(
                    "more than 8 KiB without the end of a header".into(),
                ));
            }
            return Ok(None);
        };
        let header = std::str::from_utf8(&self.buf[..end])
            .map_err(|_| FrameError::BadHeader("not UTF-8".into()))?;
        let mut length = None;
        for line in header.split("\r\n") {
            let Some((name, value)) = line.split_once(':') else {
                return Err(FrameError::BadHeader(format!("“{line}”")));
            };
            if name.trim().eq_ignore_ascii_case("content-length") {
                let n: usize = value
                    .trim()
                    .parse()
                    .map_err(|_| FrameError::BadHeader(format!("“{line}”")))?;
                length = Some(n);
            }
        }
        let length = length.ok_or(FrameError::MissingLength)?;
        if length > MAX_FRAME {
            return Err(FrameError::TooLarge(length));
        }
        let start = end + 4;
        if self.buf.len() < start + length {
            return Ok(None);
        }
        let body = self.buf[start..start + length].to_vec();
        self.buf.drain(..start + length);
        Ok(Some(body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn frames_split_anywhere_come_out_whole_and_in_order() {
        let mut stream = encode(br#"{"a":1}"#);
        stream.extend(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n");
        stream.extend(encode("{\"b\":\"한🙂\"}".as_bytes()));
        for cut in 0..stream.len() {
            let mut d = Decoder::default();
            d.push(&stream[..cut]);
            let mut got = Vec::new();
            while let Some(f) = d.next_frame().unwrap() {
                got.push(f);
            }
            d.push(&stream[cut..]);
            while let Some(f) = d.next_frame().unwrap() {
                got.push(f);
            }
            assert_eq!(
                got,
                vec![
                    br#"{"a":1}"#.to_vec(),
                    "{\"b\":\"한🙂\"}".as_bytes().to_vec()
                ],
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn broken_headers_are_typed_errors() {
        let mut d = Decoder::default();
        d.push(b"Content-Type: x\r\n\r\n{}");
        assert_eq!(d.next_frame(), Err(FrameError::MissingLength));
        let mut d = Decoder::default();
        d.push(b"Content-Length: ten\r\n\r\n");
        assert_eq!(
            d.next_frame(),
            Err(FrameError::BadHeader("“Content-Length: ten”".into()))
        );
        let mut d = Decoder::default();
        d.push(format!("Content-Length: {}\r\n\r\n", MAX_FRAME + 1).as_bytes());
        assert_eq!(d.next_frame(), Err(FrameError::TooLarge(MAX_FRAME + 1)));
        let mut d = Decoder::default();
        d.push(&[b'x'; 9000]);
        assert!(matches!(d.next_frame(), Err(FrameError::BadHeader(_))));
    }
}
