//! LEB128: an unsigned number in 7-bit groups, lowest first, each byte but
//! the last with its high bit set (the packs' lengths, the stat cache's
//! fields).

/// Appends `x`.
pub(crate) fn put(out: &mut Vec<u8>, mut x: u128) {
    while x >= 0x80 {
        out.push(u8::try_from(x & 0x7f).unwrap_or(0) | 0x80);
        x >>= 7;
    }
    out.push(u8::try_from(x).unwrap_or(0));
}

/// Takes a number off the front of `b`; `None` when cut short or longer
/// than 128 bits.
pub(crate) fn get(b: &mut &[u8]) -> Option<u128> {
    let mut x = 0u128;
    for shift in (0..128).step_by(7) {
        let (&byte, tail) = b.split_first()?;
        *b = tail;
        x |= u128::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some(x);
        }
    }
    None
}
