pub fn two() -> u8 {
    2
}
